import { useEffect, useRef, useState } from 'preact/hooks';
import type { ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { Empty, ErrorNote, Loading, Pager } from '../../components/ui';
import { usePage } from '../../components/use-page';

type Chunk = ResultOf<'/api/knowledge/documents/{id}/chunks', 'get'>['chunks'][number];
const LIMIT = 20;

/** The pages a chunk comes from, as its metadata says (`pageEnd` when it spans pages). */
function pagesOf(metadata: Chunk['metadata']): string | null {
  const start = typeof metadata.pageNumber === 'number' ? metadata.pageNumber : null;
  const end = typeof metadata.pageEnd === 'number' ? metadata.pageEnd : null;
  if (start === null) return null;
  return end !== null && end !== start ? `pages ${start}–${end}` : `page ${start}`;
}

/**
 * A document's chunks as they were indexed (`GET /api/knowledge/documents/{id}/chunks`), 20 a
 * page in document order: each chunk's position, token count, page and section, then its text.
 * Opened from the documents table; its heading takes the focus so the keyboard and screen
 * readers land on it.
 */
export function ChunkViewer({ document, onClose }: { document: { id: string; fileName: string }; onClose: () => void }) {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);
  const { page, error } = usePage((signal) => api.call('get', '/api/knowledge/documents/{id}/chunks', { params: { id: document.id }, query: { limit: LIMIT, offset }, signal }), [document.id, offset]);
  useEffect(() => {
    setOffset(0);
    heading.current?.focus();
    heading.current?.scrollIntoView({ block: 'nearest' });
  }, [document.id]);

  return (
    <section class="card chunk-viewer" aria-labelledby="chunks-title">
      <div class="title-row">
        <h2 id="chunks-title" ref={heading} tabIndex={-1}>
          Chunks of {document.fileName}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorNote message={error} />
      {!page && !error ? <Loading what="chunks" /> : null}
      {page && page.total === 0 ? <Empty title="No chunks">This document has no indexed text (still indexing, or it failed).</Empty> : null}
      {page && page.chunks.length > 0 ? (
        <ol class="chunks" aria-label={`Chunks of ${document.fileName}`}>
          {page.chunks.map((c) => {
            const pages = pagesOf(c.metadata);
            const section = typeof c.metadata.section === 'string' && c.metadata.section ? c.metadata.section : null;
            return (
              <li key={c.id} class="chunk-item" data-index={c.index}>
                <p class="chunk-meta">
                  <strong>
                    Chunk {c.index + 1} of {page.total}
                  </strong>
                  {[`${c.tokenCount} tokens`, pages, section ? `section ${section}` : null]
                    .filter(Boolean)
                    .map((part) => ` · ${part}`)
                    .join('')}
                </p>
                <p class="chunk">{c.content}</p>
              </li>
            );
          })}
        </ol>
      ) : null}
      {page ? <Pager label="Chunks" offset={offset} limit={LIMIT} total={page.total} onOffset={setOffset} /> : null}
    </section>
  );
}
