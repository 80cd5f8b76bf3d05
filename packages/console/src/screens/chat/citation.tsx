import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../../api/client';
import { useApi } from '../../app';
import { Marked, queryTerms } from '../../components/marked';
import { ErrorNote } from '../../components/ui';
import type { Source } from './answer-stream';

/**
 * The chunk a citation points at. The agent searched the project's knowledge with the question
 * (project defaults), so the same search finds the chunk again by its id; a chunk whose
 * document was deleted or changed since says so.
 */
export function CitationPanel({ projectId, question, source, onClose }: { projectId: string; question: string; source: Source; onClose: () => void }) {
  const api = useApi();
  const [content, setContent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setContent(null);
    setError(null);
    api
      .call('post', '/api/knowledge/search', { body: { projectId, query: question, topK: 100 } })
      .then((r) => {
        const hit = r.documents.find((d) => d.id === source.chunkId);
        if (hit) setContent(hit.content);
        else setError('This chunk is no longer in the knowledge base (its document was deleted or re-indexed).');
      })
      .catch((e) => setError(messageOf(e)));
  }, [source.chunkId, question]);
  return (
    <aside class="card citation" aria-labelledby="citation-title">
      <div class="title-row">
        <h3 id="citation-title">
          [{source.index}] {source.fileName} <span class="muted">score {source.score.toFixed(3)}</span>
        </h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorNote message={error} />
      {content === null && !error ? <p aria-live="polite">Loading the chunk…</p> : null}
      {content !== null ? (
        <p class="chunk">
          <Marked text={content} terms={queryTerms(question)} />
        </p>
      ) : null}
    </aside>
  );
}

/** An answer's text with its `[n]` markers as buttons that open source n. */
export function CitedText({ text, sources, onOpen }: { text: string; sources: readonly Source[]; onOpen: (source: Source) => void }) {
  const parts = text.split(/\[(\d+)\]/);
  return (
    <>
      {parts.map((part, i) => {
        if (i % 2 === 0) return part;
        const source = sources.find((s) => s.index === Number(part));
        if (!source) return `[${part}]`;
        return (
          <button key={i} type="button" class="cite" onClick={() => onOpen(source)} aria-label={`Source ${source.index}: ${source.fileName}`}>
            [{part}]
          </button>
        );
      })}
    </>
  );
}
