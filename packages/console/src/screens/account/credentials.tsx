import { useEffect, useState } from 'preact/hooks';
import { type Api, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { formatTime } from '../../components/format';
import { ListTable, RowAction } from '../../components/list-table';
import { ConfirmDialog, Empty, ErrorNote } from '../../components/ui';
import { projectHref } from '../../router';
import { type Credential, CredentialForm } from './credential-form';

type TestOutcome = ResultOf<'/api/v1/credentials/{id}/test', 'post'>;

interface NamingProject {
  readonly id: string;
  readonly name: string;
}

/** Pages of the project list read to find which projects name a credential (100 projects each). */
const MAX_PROJECT_PAGES = 10;

/**
 * The projects that name each credential (`credentialId`), from the project list: the API
 * answers that per project, not per credential. Read in pages of 100 by cursor, at most
 * MAX_PROJECT_PAGES; `complete` is false when there were more projects than that.
 */
async function projectsByCredential(api: Api, signal: AbortSignal): Promise<{ byCredential: Map<string, NamingProject[]>; complete: boolean }> {
  const byCredential = new Map<string, NamingProject[]>();
  let cursor = '';
  for (let page = 0; page < MAX_PROJECT_PAGES; page++) {
    const r = await api.call('get', '/api/v1/projects', { query: { limit: 100, ...(cursor ? { cursor } : {}) }, signal });
    for (const p of r.projects) if (p.credentialId) byCredential.set(p.credentialId, [...(byCredential.get(p.credentialId) ?? []), { id: p.id, name: p.name }]);
    if (!r.hasMore) return { byCredential, complete: true };
    cursor = r.nextCursor;
  }
  return { byCredential, complete: false };
}

/** What the Status cell says: this session's test outcome, else the recorded validity. */
function Status({ credential, testing, outcome }: { credential: Credential; testing: boolean; outcome: TestOutcome | undefined }) {
  if (testing) return <span class="muted">Testing…</span>;
  if (outcome) {
    return outcome.ok ? <span class="ok">Works: {outcome.message.replace(/^The provider answered: /, '')}</span> : <span class="error">Failed: {outcome.message}</span>;
  }
  if (credential.isValid === true) return <span class="ok">Worked when last tested</span>;
  if (credential.isValid === false) return <span class="error">Failed when last tested</span>;
  return <span class="muted">Not tested</span>;
}

/**
 * The caller's model provider credentials: provider, name, base URL (masked by the service)
 * and the key's last four characters only; add, edit, test, make default, delete with
 * confirmation. A project that names no credential uses its provider's default (marked here);
 * which projects name a credential is shown from the project list. The service refuses (409) to
 * delete one that projects use, and that message is shown as it words it.
 */
export function CredentialsScreen() {
  const api = useApi();
  const [credentials, setCredentials] = useState<Credential[] | null>(null);
  const [usage, setUsage] = useState<{ byCredential: Map<string, NamingProject[]>; complete: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Credential | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Credential | null>(null);
  const [testing, setTesting] = useState<ReadonlySet<string>>(new Set());
  const [outcomes, setOutcomes] = useState<ReadonlyMap<string, TestOutcome>>(new Map());
  const [reload, setReload] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    Promise.all([api.call('get', '/api/v1/credentials', { signal: abort.signal }), projectsByCredential(api, abort.signal)])
      .then(([r, u]) => {
        setCredentials(r.credentials);
        setUsage(u);
      })
      .catch((e) => abort.signal.aborted || setError(messageOf(e)));
    return () => abort.abort();
  }, [reload]);

  const remove = async () => {
    if (!deleting) return;
    const target = deleting;
    setDeleting(null);
    try {
      await api.call('delete', '/api/v1/credentials/{id}', { params: { id: target.id } });
      setError(null);
      setReload((n) => n + 1);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const test = async (credential: Credential) => {
    setTesting((now) => new Set(now).add(credential.id));
    try {
      const outcome = await api.call('post', '/api/v1/credentials/{id}/test', { params: { id: credential.id } });
      setOutcomes((now) => new Map(now).set(credential.id, outcome));
      setCredentials((now) => (now ? now.map((c) => (c.id === credential.id ? outcome.credential : c)) : now));
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setTesting((now) => {
        const next = new Set(now);
        next.delete(credential.id);
        return next;
      });
    }
  };
  const makeDefault = async (credential: Credential) => {
    try {
      await api.call('patch', '/api/v1/credentials/{id}', { params: { id: credential.id }, body: { data: { default: true } } });
      setError(null);
      setReload((n) => n + 1);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const naming = (id: string) => usage?.byCredential.get(id) ?? [];

  return (
    <section aria-labelledby="credentials-title">
      <div class="title-row">
        <h1 id="credentials-title">Credentials</h1>
        <button type="button" class="primary" onClick={() => setEditing('new')}>
          New credential
        </button>
      </div>
      <p class="muted">
        A project's model calls use the credential the project names; a project that names none uses the default credential of its provider (the first one you add, until you make another the default),
        else the server's own settings (OPENAI_API_KEY, OLLAMA_HOST). Adding a credential never moves a project. A project's page shows where its calls go.
      </p>
      {editing ? (
        <CredentialForm
          credential={editing === 'new' ? null : editing}
          onDone={(saved) => {
            setEditing(null);
            if (saved) setReload((n) => n + 1);
          }}
        />
      ) : null}
      <ErrorNote message={error} />
      {credentials && credentials.length === 0 ? (
        <Empty title="No credentials yet">Add the key (and address) of a model provider with New credential (each provider asks for its own fields); projects of that provider then use it.</Empty>
      ) : null}
      {credentials && credentials.length > 0 ? (
        <ListTable caption="Credentials, newest first" columns={['Name', 'Provider', 'Base URL', 'Key', 'Status', 'Named by', 'Created']}>
          {credentials.map((c) => (
            <tr key={c.id}>
              <td>
                {c.name}
                {c.default ? (
                  <div>
                    <span class="status completed">Default</span>
                    <span class="visually-hidden"> for {c.provider}</span>
                  </div>
                ) : null}
                {c.proxy ? <div class="muted">through the proxy</div> : null}
              </td>
              <td>{c.provider}</td>
              <td>{c.baseUrl ? <code>{c.baseUrl}</code> : <span class="muted">provider's default</span>}</td>
              <td>
                <span class="visually-hidden">ends in </span>
                <code>…{c.apiKeyLast4}</code>
              </td>
              <td aria-live="polite">
                <Status credential={c} testing={testing.has(c.id)} outcome={outcomes.get(c.id)} />
              </td>
              <td>
                {naming(c.id).length === 0 ? (
                  <span class="muted">no project</span>
                ) : (
                  <ul class="inline">
                    {naming(c.id).map((p) => (
                      <li key={p.id}>
                        <a href={projectHref(p.id)}>{p.name}</a>
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td>{formatTime(c.createdAt)}</td>
              <td class="actions">
                <button type="button" aria-label={`Test ${c.name}`} disabled={testing.has(c.id)} onClick={() => test(c)}>
                  Test
                </button>
                {c.default ? null : <RowAction action="Make default" target={c.name} onClick={() => makeDefault(c)} />}
                <RowAction action="Edit" target={c.name} onClick={() => setEditing(c)} />
                <RowAction action="Delete" target={c.name} danger onClick={() => setDeleting(c)} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      {usage && !usage.complete ? <p class="muted">"Named by" reads your first {MAX_PROJECT_PAGES * 100} projects.</p> : null}
      <ConfirmDialog open={deleting !== null} title="Delete credential?" confirm="Delete credential" onConfirm={remove} onClose={() => setDeleting(null)}>
        <p>
          Delete <strong>{deleting?.name}</strong> ({deleting?.provider}, key ending in {deleting?.apiKeyLast4})? This cannot be undone.
        </p>
        {deleting?.default ? (
          <p>
            It is the default for {deleting.provider}: the service keeps it while projects that name no credential use it. Make another credential the default first, or name one on those projects.
          </p>
        ) : null}
        {deleting && naming(deleting.id).length > 0 ? (
          <p>
            Named by{' '}
            {naming(deleting.id)
              .map((p) => p.name)
              .join(', ')}
            : the service keeps it until those projects name another credential or none.
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}
