import { useState } from 'preact/hooks';
import { Api, messageOf } from '../api/client';
import { ErrorNote, Field } from '../components/ui';

/**
 * Sign-in with an API key. The key is checked by calling the API with it (listing the caller's
 * keys) before it is kept, so a mistyped or revoked key is refused here with the service's
 * own message. `notice` says why the console was signed out (a refused or revoked key).
 */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (key: string) => void; notice: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(notice);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const value = key.trim();
    if (!value) return setError('Paste an API key first.');
    setBusy(true);
    setError(null);
    try {
      await new Api(value).call('get', '/api/auth/keys');
      onSignedIn(value);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <form onSubmit={submit} class="card" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Agent Platform</h1>
        <p>
          Sign in with an API key. The server prints one on its first start; <code>agent-platform keys create --name NAME</code> makes more.
        </p>
        <Field id="api-key" label="API key" hint="Kept in this tab only (session storage) and sent only in the Authorization header.">
          <input id="api-key" type="password" autocomplete="off" spellcheck={false} value={key} onInput={(e) => setKey(e.currentTarget.value)} aria-describedby="api-key-hint" required />
        </Field>
        <ErrorNote message={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
