import { useState } from 'preact/hooks';
import { ApiError, type BodyOf, messageOf } from '../../api/client';
import { useApi } from '../../api/context';
import { CREDENTIAL_PROVIDERS } from '../../api/enums';
import { labelOf } from '../../components/error-text';
import { fieldErrors } from '../../components/field-errors';
import { describedBy, ErrorNote, Field, Options } from '../../components/ui';
import { ALL_FIELDS, asPatch, type Credential, fieldsOf, fieldsToSend, initialFields, type Provider, type ProviderField } from './credential-fields';

const lowerFirst = (text: string) => (/^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text);

export type { Credential } from './credential-fields';

const FIELDS = ['name', 'provider', 'baseUrl', 'proxy', 'default', ...ALL_FIELDS];
/** The outbound policy's refusal ends "...; allow it with --allow-host": that part is about the address too. */
const POLICY_HINT = { 'allow it with --allow-host': 'baseUrl' };
/** Where a provider's calls go with no base URL (the registry's defaults, as the docs give them); a provider not listed says it generally. */
const DEFAULT_ADDRESS: Partial<Record<Provider, string>> = {
  openai: "Empty: the server's OPENAI_BASE_URL, else https://api.openai.com/v1.",
  ollama: "Empty: the server's OLLAMA_HOST, else http://127.0.0.1:11434.",
  anthropic: "Empty: the server's ANTHROPIC_BASE_URL, else https://api.anthropic.com/v1.",
  bedrock: 'Empty: https://bedrock-runtime.{region}.amazonaws.com. A VPC endpoint or a gateway forwarding signed requests goes here.',
  google: "Empty: the server's GOOGLE_GENERATIVE_AI_BASE_URL, else https://generativelanguage.googleapis.com/v1beta.",
  azure: 'Empty: {endpoint}/openai. A gateway in front of the resource (API Management, LiteLLM) goes here.',
};
const addressHint = (provider: Provider) => DEFAULT_ADDRESS[provider] ?? "Empty: the provider's default address.";

/**
 * Add a credential (`credential` null) or change one. The provider's own fields come from the
 * API's contract (`CREDENTIAL_FIELDS`, generated): a secret (`writeOnly`) is typed into a
 * password field, sent once and then dropped from the form, never shown back (the service answers
 * only its last four characters; empty keeps it); an address is a URL field; a map (Azure's
 * deployments) is `name = value` lines. The provider is fixed once created. The base URL is shown
 * as the service answers it (user:password and query values masked): it is sent only when
 * changed, and emptying it sends null (the provider's default address). The service checks an
 * address against the server's outbound policy; its 400 message for a field is shown next to
 * that field.
 */
export function CredentialForm({ credential, onDone }: { credential: Credential | null; onDone: (saved: boolean) => void }) {
  const api = useApi();
  const [values, setValues] = useState({
    name: credential?.name ?? '',
    provider: credential?.provider ?? ('openai' as Provider),
    baseUrl: credential?.baseUrl ?? '',
    proxy: credential?.proxy ?? false,
    // New: ticked makes it the default; unticked leaves the default where it is (the first credential of a provider is its default anyway).
    isDefault: credential?.default ?? false,
  });
  const [fields, setFields] = useState(() => initialFields(values.provider, credential));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const text = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  const check = (name: 'proxy' | 'isDefault') => (e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).checked });
  const setProvider = (e: Event) => {
    const provider = text(e) as Provider;
    setValues({ ...values, provider });
    setFields(initialFields(provider, null));
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const own = fieldsToSend(values.provider, fields, credential);
    setErrors(own.errors);
    if (Object.keys(own.errors).length > 0) return;
    setBusy(true);
    try {
      if (credential) {
        const data: BodyOf<'/api/v1/credentials/{id}', 'patch'>['data'] = { name: values.name, proxy: values.proxy, ...asPatch(own.data) };
        // The masked address as shown means "unchanged"; empty means the provider's default.
        const baseUrl = values.baseUrl.trim();
        if (baseUrl !== (credential.baseUrl ?? '')) data.baseUrl = baseUrl === '' ? null : baseUrl;
        if (values.isDefault !== credential.default) data.default = values.isDefault;
        await api.call('patch', '/api/v1/credentials/{id}', { params: { id: credential.id }, body: { data } });
      } else {
        const body = {
          name: values.name,
          provider: values.provider,
          ...own.data,
          ...(values.baseUrl.trim() ? { baseUrl: values.baseUrl.trim() } : {}),
          proxy: values.proxy,
          ...(values.isDefault ? { default: true } : {}),
        } as BodyOf<'/api/v1/credentials', 'post'>;
        await api.call('post', '/api/v1/credentials', { body });
      }
      onDone(true);
    } catch (err) {
      // 400: a field is wrong, or the outbound policy refuses the address; 503: its host name does not resolve.
      setErrors(err instanceof ApiError && (err.status === 400 || err.status === 503) ? fieldErrors(err, FIELDS, POLICY_HINT) : { form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const input = (id: string, label: string, value: string, onInput: (e: Event) => void, extra: Record<string, unknown>, hint?: string) => (
    <Field key={id} id={`credential-${id}`} label={label} error={errors[id]} {...(hint ? { hint } : {})}>
      <input id={`credential-${id}`} value={value} onInput={onInput} {...describedBy(`credential-${id}`, errors[id], Boolean(hint))} {...extra} />
    </Field>
  );
  const own = (f: ProviderField) => {
    const value = fields[f.name] ?? '';
    const onInput = (e: Event) => setFields({ ...fields, [f.name]: text(e) });
    if (f.secret) {
      const last4 = credential?.secretsLast4[f.name];
      return input(
        f.name,
        credential ? `New ${lowerFirst(labelOf(f.name))}` : labelOf(f.name),
        value,
        onInput,
        // A password field: the secret is not echoed on screen, and the browser offers no autofill.
        { type: 'password', autocomplete: 'new-password', spellcheck: false, required: f.required && credential === null },
        credential ? (last4 ? `Empty keeps the current one (ending in ${last4}).` : 'Empty: none.') : 'Stored encrypted; only its last four characters are ever shown.',
      );
    }
    if (f.kind === 'map') {
      return (
        <Field key={f.name} id={`credential-${f.name}`} label={labelOf(f.name)} error={errors[f.name]} hint={`${f.description}. One "name = value" a line.`}>
          <textarea id={`credential-${f.name}`} rows={3} value={value} onInput={onInput} spellcheck={false} {...describedBy(`credential-${f.name}`, errors[f.name], true)} />
        </Field>
      );
    }
    return input(f.name, labelOf(f.name), value, onInput, { type: f.kind === 'url' ? 'url' : 'text', required: f.required, spellcheck: false }, f.description);
  };

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="credential-form-title">
      <h2 id="credential-form-title">{credential ? `Edit ${credential.name}` : 'New credential'}</h2>
      <div class="grid">
        <Field id="credential-provider" label="Provider" error={errors.provider}>
          <select id="credential-provider" value={values.provider} onChange={setProvider} disabled={credential !== null} {...describedBy('credential-provider', errors.provider)}>
            <Options values={CREDENTIAL_PROVIDERS} />
          </select>
        </Field>
        {input('name', 'Name', values.name, (e) => setValues({ ...values, name: text(e) }), { required: true, maxLength: 100 })}
        {fieldsOf(values.provider).map(own)}
        {input(
          'baseUrl',
          'Base URL',
          values.baseUrl,
          (e) => setValues({ ...values, baseUrl: text(e) }),
          { type: 'url', placeholder: 'https://…' },
          credential?.baseUrl?.includes('****') ? `Shown masked: leave it as it is to keep it. ${addressHint(values.provider)}` : addressHint(values.provider),
        )}
      </div>
      <div class="checks">
        <label>
          <input type="checkbox" class="checkbox" checked={values.proxy} onChange={check('proxy')} /> Send this provider's calls through the server's HTTPS_PROXY / HTTP_PROXY
        </label>
        <label>
          <input type="checkbox" class="checkbox" checked={values.isDefault} onChange={check('isDefault')} /> Default for {values.provider}: projects that name no credential use it
          {credential?.default && !values.isDefault ? " (unticked: they use the server's settings instead)" : ''}
          {!credential ? ' (the first credential of a provider is its default anyway)' : ''}
        </label>
      </div>
      <ErrorNote message={[errors.proxy, errors.default, errors.form].filter(Boolean).join('; ')} />
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
