import { useEffect, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../../api/client';
import { useApi } from '../../api/context';
import { Marked, queryTerms } from '../../components/marked';
import { ErrorNote } from '../../components/ui';
import type { Source } from './answer-stream';

/**
 * The chunk a citation points at (`GET /api/knowledge/chunks/{id}`), with the question's words
 * marked; when the chunk is gone, the first words the answer kept of it.
 */
export function CitationPanel({ question, source, onClose }: { question: string; source: Source; onClose: () => void }) {
  const api = useApi();
  const [content, setContent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setContent(null);
    setError(null);
    api
      .call('get', '/api/knowledge/chunks/{id}', { params: { id: source.chunkId } })
      .then((r) => setContent(r.chunk.content))
      .catch((e) => setError(e instanceof ApiError && e.status === 404 ? 'This chunk is no longer in the knowledge base (its document was deleted or re-indexed).' : messageOf(e)));
  }, [source.chunkId]);
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
      {error && source.excerpt ? (
        <>
          <p class="muted">Its first words, as kept with the answer:</p>
          <p class="chunk excerpt">{source.excerpt}</p>
        </>
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
