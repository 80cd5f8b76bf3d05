import { useState } from 'preact/hooks';
import { ApiError, messageOf, type ResultOf } from '../../api/client';
import { useApi, useSignOut } from '../../api/context';
import { fieldErrors } from '../../components/field-errors';
import { formatTime } from '../../components/format';
import { ListTable, RowAction } from '../../components/list-table';
import { ConfirmDialog, describedBy, ErrorNote, Field, Loading, Pager } from '../../components/ui';
import { usePage } from '../../components/use-page';
import { NewKeyDialog } from './new-key-dialog';

type KeyList = ResultOf<'/api/auth/keys', 'get'>;
type ApiKey = KeyList['keys'][number];

/** Keys per page. */
const LIMIT = 20;

/** What the sign-in screen says after the console revoked its own key. */
const REVOKED_OWN_KEY = 'You revoked the key this console was signed in with. Sign in with another key.';

/**
 * The API keys of the signed-in user, a page at a time (names, public starts, times; never a
 * secret): create one (shown once, with a copy button), revoke one after confirmation. The key
 * this console is signed in with is marked; revoking it signs the console out at once, saying why.
 */
export function ApiKeysScreen() {
  const api = useApi();
  const signOut = useSignOut();
  const [offset, setOffset] = useState(0);
  const { page: list, error, setError, reload } = usePage((signal) => api.call('get', '/api/auth/keys', { query: { limit: LIMIT, offset }, signal }), [offset]);
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setNameError(undefined);
    setError(null);
    try {
      const r = await api.call('post', '/api/auth/create-key', { body: { name } });
      setCreated({ name: r.name, key: r.key });
      setName('');
      // The new key is the newest: on the first page.
      if (offset === 0) reload();
      else setOffset(0);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) setNameError(fieldErrors(err, ['name']).name ?? err.text);
      else setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async () => {
    if (!revoking) return;
    const target = revoking;
    setRevoking(null);
    try {
      await api.call('delete', '/api/auth/keys/{id}', { params: { id: target.id } });
      // The console's own key no longer works: sign out now rather than at the next call's 401.
      if (api.hasPrefix(target.prefix)) return signOut(REVOKED_OWN_KEY);
      // The last key of a later page gone: the page before it.
      if (list && list.keys.length === 1 && offset > 0) setOffset(Math.max(0, offset - LIMIT));
      else reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const own = revoking !== null && api.hasPrefix(revoking.prefix);

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {list ? (
        <p class="muted">
          Keys of user <code>{list.userId}</code>. An operator makes more for this user with <code>agent-platform keys create --name NAME --user {list.userId}</code>.
        </p>
      ) : null}
      <form class="card toolbar" onSubmit={create} aria-labelledby="new-key-form-title">
        <h2 id="new-key-form-title" class="visually-hidden">
          New API key
        </h2>
        <Field id="key-name" label="Name of a new key" error={nameError}>
          <input id="key-name" value={name} maxLength={100} required onInput={(e) => setName(e.currentTarget.value)} {...describedBy('key-name', nameError)} />
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          Create key
        </button>
      </form>
      <ErrorNote message={error} />
      {!list && !error ? <Loading what="API keys" /> : null}
      {list ? (
        <ListTable caption="API keys, newest first" columns={['Name', 'Key starts with', 'Created', 'Last used']}>
          {list.keys.map((k) => (
            <tr key={k.id}>
              <td>
                {k.name}
                {api.hasPrefix(k.prefix) ? <div class="muted">this console is signed in with it</div> : null}
              </td>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{formatTime(k.createdAt)}</td>
              <td>{formatTime(k.lastUsedAt)}</td>
              <td class="actions">
                <RowAction action="Revoke" target={k.name} danger onClick={() => setRevoking(k)} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      {list ? <Pager label="API keys" offset={offset} limit={LIMIT} total={list.total} onOffset={setOffset} /> : null}
      <p class="hint">"Last used" is updated at most once a minute.</p>
      <NewKeyDialog created={created} onClose={() => setCreated(null)} />
      <ConfirmDialog open={revoking !== null} title="Revoke API key?" confirm="Revoke key" onConfirm={revoke} onClose={() => setRevoking(null)}>
        <p>
          Revoke <strong>{revoking?.name}</strong> (<code>{revoking?.prefix}…</code>)? Every client using it is refused from now on. This cannot be undone.
        </p>
        {own ? (
          <p>
            <strong>This console is signed in with this key:</strong> it signs out at once, and you sign in again with another key.
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}
