import { useState } from 'preact/hooks';
import { messageOf, type QueryOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { formatTime } from '../../components/format';
import { ListTable, RowAction } from '../../components/list-table';
import { ConfirmDialog, Empty, ErrorNote, Loading, Options, Pager } from '../../components/ui';
import { usePage } from '../../components/use-page';
import { ChunkViewer } from './chunks';

type Doc = ResultOf<'/api/knowledge/documents', 'get'>['documents'][number];
type Status = NonNullable<QueryOf<'/api/knowledge/documents', 'get'>['status']>;
const STATUSES: readonly Status[] = ['pending', 'processing', 'completed', 'failed'];
const LIMIT = 20;

/**
 * The project's documents, one page at a time (the API pages them, so 10,000 documents cost
 * what 20 do), filtered by status, with chunk counts, the error of a failed one, and delete.
 */
export function DocumentsTable({ projectId, version }: { projectId: string; version: number }) {
  const api = useApi();
  const [status, setStatus] = useState<Status | ''>('');
  const [offset, setOffset] = useState(0);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [deleting, setDeleting] = useState<Doc | null>(null);
  const [viewing, setViewing] = useState<Doc | null>(null);
  const { page, error, setError, reload } = usePage(
    (signal) => api.call('get', '/api/knowledge/documents', { query: { projectId, limit: LIMIT, offset, ...(status ? { status } : {}) }, signal }),
    [projectId, status, offset, version],
  );

  const showError = async (doc: Doc) => {
    try {
      const { document } = await api.call('get', '/api/knowledge/documents/{id}', { params: { id: doc.id } });
      setErrors((all) => ({ ...all, [doc.id]: document.error ?? 'No error recorded' }));
    } catch (e) {
      setErrors((all) => ({ ...all, [doc.id]: messageOf(e) }));
    }
  };
  const remove = async () => {
    if (!deleting) return;
    const doc = deleting;
    setDeleting(null);
    if (viewing?.id === doc.id) setViewing(null);
    try {
      await api.call('delete', '/api/knowledge/documents/{id}', { params: { id: doc.id } });
      reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  return (
    <section aria-labelledby="documents-title" class="card">
      <div class="title-row">
        <h2 id="documents-title">Documents</h2>
        <div class="toolbar">
          <label for="status-filter">Status</label>
          <select
            id="status-filter"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as Status | '');
              setOffset(0);
            }}
          >
            <option value="">All</option>
            <Options values={STATUSES} />
          </select>
        </div>
      </div>
      <ErrorNote message={error} />
      {!page && !error ? <Loading what="documents" /> : null}
      {page && page.documents.length === 0 ? (
        <Empty title={status ? `No ${status} documents` : 'No documents yet'}>
          {status ? 'Choose another status, or All.' : 'Add files or paste text above: they are chunked, embedded and searchable here.'}
        </Empty>
      ) : null}
      {page && page.documents.length > 0 ? (
        <ListTable caption="Documents, newest first" columns={['File', 'Type', 'Status', { label: 'Chunks', number: true }, { label: 'Vectors', number: true }, 'Added']}>
          {page.documents.map((d) => (
            <tr key={d.id} data-status={d.status}>
              <td>{d.fileName}</td>
              <td>{d.fileType}</td>
              <td>
                <span class={`status ${d.status}`}>{d.status}</span>
                {d.status === 'failed' ? (
                  errors[d.id] ? (
                    <div class="error">{errors[d.id]}</div>
                  ) : (
                    <button type="button" class="link" onClick={() => showError(d)}>
                      Show error
                    </button>
                  )
                ) : null}
              </td>
              <td class="number">{d.chunkCount}</td>
              <td class="number">{d.vectorCount}</td>
              <td>{formatTime(d.createdAt)}</td>
              <td class="actions">
                {d.chunkCount > 0 ? <RowAction action="Chunks" target={`of ${d.fileName}`} onClick={() => setViewing(d)} /> : null}
                <RowAction action="Delete" target={d.fileName} danger onClick={() => setDeleting(d)} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      {page ? <Pager label="Documents" offset={offset} limit={LIMIT} total={page.total} onOffset={setOffset} /> : null}
      {viewing ? <ChunkViewer document={viewing} onClose={() => setViewing(null)} /> : null}
      <ConfirmDialog open={deleting !== null} title="Delete document?" confirm="Delete document" onConfirm={remove} onClose={() => setDeleting(null)}>
        <p>
          Delete <strong>{deleting?.fileName}</strong> with its chunks and vectors?
        </p>
      </ConfirmDialog>
    </section>
  );
}
