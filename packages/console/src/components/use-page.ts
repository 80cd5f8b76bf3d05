import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api/client';

/** A page of a list the API answers, with what a list screen does with it. */
export interface PageState<T> {
  /** The page, once it has come (kept while the next one loads). */
  readonly page: T | null;
  /** The service's message when loading (or an action on the list) failed. */
  readonly error: string | null;
  readonly setError: (message: string | null) => void;
  /** Changes the page in place (an item switched on or off) without asking again. */
  readonly setPage: (update: (page: T | null) => T | null) => void;
  /** Asks for the page again (after an item was added or deleted). */
  readonly reload: () => void;
}

/**
 * Loads a page of a list whenever `deps` change (project, offset, filter…) or `reload` is
 * called. A load that is overtaken (the user paged on) is aborted and its answer dropped, so an
 * older page never replaces a newer one.
 */
export function usePage<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): PageState<T> {
  const [page, setPage] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    load(abort.signal)
      .then((p) => {
        setPage(p);
        setError(null);
      })
      .catch((e) => abort.signal.aborted || setError(messageOf(e)));
    return () => abort.abort();
  }, [...deps, version]);
  return { page, error, setError, setPage, reload: () => setVersion((n) => n + 1) };
}
