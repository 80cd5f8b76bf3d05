import { useState } from 'preact/hooks';
import { ApiError, type BodyOf, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../app';
import { fieldErrors } from '../../components/field-errors';
import { describedBy, ErrorNote, Field, Options } from '../../components/ui';

export type Credential = ResultOf<'/api/v1/credentials', 'get'>['credentials'][number];
type Provider = BodyOf<'/api/v1/credentials', 'post'>['provider'];

const PROVIDERS: readonly Provider[] = ['openai', 'ollama'];
const FIELDS = ['name', 'provider', 'apiKey', 'baseUrl', 'proxy', 'isValid'] as const;
const DEFAULT_ADDRESS: Record<Provider, string> = {
  openai: "Empty: the server's OPENAI_BASE_URL, else https://api.openai.com/v1.",
  ollama: "Empty: the server's OLLAMA_HOST, else http://127.0.0.1:11434.",
};

/**
 * Add a credential (`credential` null) or change one. The key is typed into a password field,
 * sent once and then dropped from the form: the console never shows it back (the service
 * answers only its last four characters). Provider and base URL are fixed once created (the
 * API changes name, key, proxy and validity only). The service's 400 message for a field is
 * shown next to that field.
 */
export function CredentialForm({ credential, onDone }: { credential: Credential | null; onDone: (saved: boolean) => void }) {
  const api = useApi();
  const [values, setValues] = useState({
    name: credential?.name ?? '',
    provider: credential?.provider ?? ('openai' as Provider),
    apiKey: '',
    baseUrl: credential?.baseUrl ?? '',
    proxy: credential?.proxy ?? false,
    invalid: credential?.isValid === false,
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const set = (name: 'name' | 'provider' | 'apiKey' | 'baseUrl') => (e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value });
  const check = (name: 'proxy' | 'invalid') => (e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).checked });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      if (credential) {
        const data: BodyOf<'/api/v1/credentials/{id}', 'patch'>['data'] = { name: values.name, proxy: values.proxy };
        if (values.apiKey) data.apiKey = values.apiKey;
        // Unticking "not valid" clears the mark; otherwise an unknown validity stays unknown.
        if (values.invalid) data.isValid = false;
        else if (credential.isValid === false) data.isValid = true;
        await api.call('patch', '/api/v1/credentials/{id}', { params: { id: credential.id }, body: { data } });
      } else {
        await api.call('post', '/api/v1/credentials', {
          body: {
            name: values.name,
            provider: values.provider,
            apiKey: values.apiKey,
            ...(values.baseUrl.trim() ? { baseUrl: values.baseUrl.trim() } : {}),
            proxy: values.proxy,
          },
        });
      }
      onDone(true);
    } catch (err) {
      setErrors(err instanceof ApiError && err.status === 400 ? fieldErrors(err.message, FIELDS) : { form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const field = (name: 'name' | 'apiKey' | 'baseUrl', label: string, extra: Record<string, unknown> = {}, hint?: string) => (
    <Field id={`credential-${name}`} label={label} error={errors[name]} {...(hint ? { hint } : {})}>
      <input id={`credential-${name}`} value={values[name]} onInput={set(name)} {...describedBy(`credential-${name}`, errors[name], Boolean(hint))} {...extra} />
    </Field>
  );

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="credential-form-title">
      <h2 id="credential-form-title">{credential ? `Edit ${credential.name}` : 'New credential'}</h2>
      <div class="grid">
        <Field id="credential-provider" label="Provider" error={errors.provider}>
          <select id="credential-provider" value={values.provider} onChange={set('provider')} disabled={credential !== null} {...describedBy('credential-provider', errors.provider)}>
            <Options values={PROVIDERS} />
          </select>
        </Field>
        {field('name', 'Name', { required: true, maxLength: 100 })}
        {field(
          'apiKey',
          credential ? 'New API key' : 'API key',
          // A password field: the key is not echoed on screen, and the browser offers no autofill.
          { type: 'password', autocomplete: 'new-password', spellcheck: false, required: credential === null },
          credential ? `Empty keeps the current key (ending in ${credential.apiKeyLast4}).` : 'Stored encrypted; only its last four characters are ever shown.',
        )}
        {field('baseUrl', 'Base URL', { type: 'url', placeholder: 'https://…', disabled: credential !== null }, credential ? 'Fixed once created.' : DEFAULT_ADDRESS[values.provider])}
      </div>
      <div class="checks">
        <label>
          <input type="checkbox" class="checkbox" checked={values.proxy} onChange={check('proxy')} /> Send this provider's calls through the server's HTTPS_PROXY / HTTP_PROXY
        </label>
        {credential ? (
          <label>
            <input type="checkbox" class="checkbox" checked={values.invalid} onChange={check('invalid')} /> Marked not valid (projects that name no credential skip it)
          </label>
        ) : null}
      </div>
      <ErrorNote message={[errors.proxy, errors.isValid, errors.form].filter(Boolean).join('; ')} />
      <div class="actions">
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          {credential ? 'Save' : 'Add credential'}
        </button>
      </div>
    </form>
  );
}
