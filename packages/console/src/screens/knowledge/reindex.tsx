import { useEffect, useRef, useState } from 'preact/hooks';
import { type Api, messageOf } from '../../api/client';
import { useApi } from '../../api/context';
import { ErrorNote } from '../../components/ui';

/** How often the documents still being indexed are counted while a re-index runs. */
const POLL_MS = 1000;

type State = { readonly step: 'offered' } | { readonly step: 'running'; readonly queued: number; readonly left: number } | { readonly step: 'done'; readonly queued: number };

/** Documents of the project waiting or being indexed (the service's counts of both statuses). */
async function unfinished(api: Api, projectId: string, signal: AbortSignal): Promise<number> {
  const count = (status: 'pending' | 'processing') => api.call('get', '/api/knowledge/documents', { query: { projectId, status, limit: 1 }, signal }).then((r) => r.total);
  const [pending, processing] = await Promise.all([count('pending'), count('processing')]);
  return pending + processing;
}

/**
 * Offered after the chunking changed: re-indexes the project's documents
 * (`POST /api/knowledge/reindex`) and follows them until none is waiting or being indexed,
 * calling `onProgress` at each count so the documents table shows their status as it moves.
 */
export function ReindexOffer({ projectId, onProgress }: { projectId: string; onProgress: () => void }) {
  const api = useApi();
  const [state, setState] = useState<State>({ step: 'offered' });
  const [error, setError] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);

  const start = async () => {
    setError(null);
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    try {
      const { queued } = await api.call('post', '/api/knowledge/reindex', { body: { projectId }, signal: controller.signal });
      setState({ step: 'running', queued, left: queued });
      onProgress();
      for (;;) {
        const left = await unfinished(api, projectId, controller.signal);
        onProgress();
        if (left === 0) break;
        setState({ step: 'running', queued, left: Math.min(left, queued) });
        await new Promise((r) => setTimeout(r, POLL_MS));
        if (controller.signal.aborted) return;
      }
      setState({ step: 'done', queued });
    } catch (e) {
      if (!controller.signal.aborted) {
        setError(messageOf(e));
        setState({ step: 'offered' });
      }
    }
  };

  return (
    <section class="reindex" aria-labelledby="reindex-note">
      <p id="reindex-note">The chunking changed. Documents indexed before keep their old chunks (and are still found by them) until they are re-indexed.</p>
      <div class="actions">
        <button type="button" onClick={start} disabled={state.step === 'running'}>
          {state.step === 'running' ? 'Re-indexing…' : 'Re-index documents'}
        </button>
      </div>
      <ErrorNote message={error} />
      {state.step === 'running' ? (
        <p role="status">{`Re-indexing ${state.queued} document${state.queued === 1 ? '' : 's'}: ${state.left} still to do…`}</p>
      ) : state.step === 'done' ? (
        <p class="ok" role="status">
          {state.queued === 0 ? 'There are no documents to re-index.' : `Re-indexed ${state.queued} document${state.queued === 1 ? '' : 's'}. See their status in the table above.`}
        </p>
      ) : null}
    </section>
  );
}
