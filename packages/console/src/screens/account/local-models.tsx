import { useEffect, useState } from 'preact/hooks';
import { ApiError, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { formatBytes, formatTime, shortDigest } from '../../components/format';
import { ListTable, RowAction } from '../../components/list-table';
import { ConfirmDialog, describedBy, Empty, ErrorNote, Field } from '../../components/ui';

type LocalModel = ResultOf<'/api/v1/localmodel/list-models', 'get'>['models'][number];

/** The listing's outcome: the models, or the service's error with its code (`unavailable`, ...). */
type Listing = { readonly models: LocalModel[] } | { readonly error: string; readonly code: string };

const DEFAULT_ADDRESS = "the server's default: OLLAMA_HOST, else http://127.0.0.1:11434";

/**
 * The models installed in the local model runtime (Ollama): name with tag, size, digest (cut,
 * whole in its title) and time; delete one after a confirmation that names the tag. The runtime
 * is the server's default or an address given here (the service checks it against its outbound
 * policy). When nothing runs there, the service's message says so and the screen says what to do.
 */
export function LocalModelsScreen() {
  const api = useApi();
  const [address, setAddress] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [listing, setListing] = useState<Listing | null>(null);
  const [deleting, setDeleting] = useState<LocalModel | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    setListing(null);
    api
      .call('get', '/api/v1/localmodel/list-models', { query: { baseUrl }, signal: abort.signal })
      .then((r) => setListing({ models: r.models }))
      .catch((e) => abort.signal.aborted || setListing({ error: messageOf(e), code: e instanceof ApiError ? e.code : 'network' }));
    return () => abort.abort();
  }, [baseUrl, reload]);

  const remove = async () => {
    if (!deleting) return;
    const target = deleting;
    setDeleting(null);
    setDone(null);
    setError(null);
    try {
      const r = await api.call('delete', '/api/v1/localmodel/delete-model', { body: { modelName: target.name, ...(baseUrl ? { baseUrl } : {}) } });
      setDone(r.message ?? `Model ${target.name} deleted`);
    } catch (e) {
      setError(messageOf(e));
    }
    setReload((n) => n + 1);
  };

  // A refused or malformed address is the address field's problem; anything else is the runtime's.
  const addressError = listing && 'error' in listing && listing.code === 'invalid_request' ? listing.error : undefined;
  const where = baseUrl || DEFAULT_ADDRESS;

  return (
    <section aria-labelledby="local-models-title">
      <h1 id="local-models-title">Local models</h1>
      <form
        class="card toolbar"
        aria-label="Runtime address"
        onSubmit={(e) => {
          e.preventDefault();
          setBaseUrl(address.trim());
          setReload((n) => n + 1);
        }}
      >
        <Field id="runtime-address" label="Ollama runtime address" error={addressError} hint={`Empty: ${DEFAULT_ADDRESS}.`}>
          <input
            id="runtime-address"
            type="url"
            placeholder="http://127.0.0.1:11434"
            value={address}
            onInput={(e) => setAddress(e.currentTarget.value)}
            {...describedBy('runtime-address', addressError, true)}
          />
        </Field>
        <button type="submit">Show models</button>
      </form>
      {done ? (
        <p class="ok" role="status">
          {done}
        </p>
      ) : null}
      <ErrorNote message={error} />
      {listing === null ? <p aria-live="polite">Asking the runtime…</p> : null}
      {listing && 'error' in listing && !addressError ? (
        <div role="alert">
          <Empty title={listing.error}>
            {listing.code === 'unavailable' || listing.code === 'timeout' || listing.code === 'network'
              ? `Start Ollama there (ollama serve), or give the address of a running one above. The server's default address is set by OLLAMA_HOST when it starts.`
              : 'The runtime answered, but not as Ollama does: check that the address is an Ollama runtime and look at its log.'}
          </Empty>
        </div>
      ) : null}
      {listing && 'models' in listing && listing.models.length === 0 ? (
        <Empty title={`No models installed at ${where}`}>
          Install one on the runtime's machine (for example <code>ollama pull llama3.2</code>), then use it in a project with provider ollama.
        </Empty>
      ) : null}
      {listing && 'models' in listing && listing.models.length > 0 ? (
        <ListTable caption={`Models installed at ${where}`} columns={['Model (name:tag)', { label: 'Size', number: true }, 'Digest', 'Modified']}>
          {listing.models.map((m) => (
            <tr key={m.name}>
              <td>{m.name}</td>
              <td class="number" title={`${m.size.toLocaleString()} bytes`}>
                {formatBytes(m.size)}
              </td>
              <td>
                <code title={m.digest}>{shortDigest(m.digest)}</code>
              </td>
              <td>{formatTime(m.modified_at)}</td>
              <td class="actions">
                <RowAction action="Delete" target={m.name} danger onClick={() => setDeleting(m)} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      <ConfirmDialog open={deleting !== null} title={`Delete ${deleting?.name ?? ''}?`} confirm={`Delete ${deleting?.name ?? ''}`} onConfirm={remove} onClose={() => setDeleting(null)}>
        <p>
          Delete the model <strong>{deleting?.name}</strong> ({formatBytes(deleting?.size ?? 0)}) from the runtime at {where}? Its files are removed from that machine's disk; other tags of the same
          model stay. Projects using it fail until it is installed again. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}
