import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api/client';
import { ErrorNote } from './ui';

/**
 * A screen whose code is loaded the first time it is shown (a dynamic import: a chunk of its
 * own, not in the console's first load). While it loads it says so; a chunk that cannot be
 * loaded (the server went away, a new build replaced it) shows why, and is tried again the next
 * time the screen is opened.
 */
export function lazyScreen<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  return function LazyScreen(props: P) {
    const [, setReady] = useState(false);
    const [error, setError] = useState<string | null>(null);
    useEffect(() => {
      if (loaded) return;
      loading ??= load().then((screen) => (loaded = screen));
      loading.then(
        () => setReady(true),
        (e: unknown) => {
          loading = undefined;
          setError(`This screen could not be loaded: ${messageOf(e)}`);
        },
      );
    }, []);
    if (loaded) {
      const Screen = loaded;
      return <Screen {...props} />;
    }
    return error ? <ErrorNote message={error} /> : <p aria-live="polite">Loading…</p>;
  };
}
