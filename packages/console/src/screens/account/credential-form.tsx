import { useState } from 'preact/hooks';
import { ApiError, type BodyOf, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { CREDENTIAL_PROVIDERS } from '../../api/enums';
import { fieldErrors } from '../../components/field-errors';
import { describedBy, ErrorNote, Field, Options } from '../../components/ui';

export type Credential = ResultOf<'/api/v1/credentials', 'get'>['credentials'][number];
type Provider = BodyOf<'/api/v1/credentials', 'post'>['provider'];

const FIELDS = ['name', 'provider', 'apiKey', 'secretAccessKey', 'endpoint', 'apiVersion', 'region', 'accessKeyId', 'sessionToken', 'baseUrl', 'proxy', 'default'] as const;
/** The outbound policy's refusal ends "...; allow it with --allow-host": that part is about the address too. */
const POLICY_HINT = { 'allow it with --allow-host': 'baseUrl' };
const DEFAULT_ADDRESS: Record<Provider, string> = {
  openai: "Empty: the server's OPENAI_BASE_URL, else https://api.openai.com/v1.",
  ollama: "Empty: the server's OLLAMA_HOST, else http://127.0.0.1:11434.",
  anthropic: "Empty: the server's ANTHROPIC_BASE_URL, else https://api.anthropic.com/v1.",
  bedrock: 'Empty: https://bedrock-runtime.{region}.amazonaws.com. A VPC endpoint or a gateway forwarding signed requests goes here.',
  google: "Empty: the server's GOOGLE_GENERATIVE_AI_BASE_URL, else https://generativelanguage.googleapis.com/v1beta.",
  azure: 'Empty: {endpoint}/openai. A gateway in front of the resource (API Management, LiteLLM) goes here.',
};

/**
 * Add a credential (`credential` null) or change one. The key is typed into a password field,
 * sent once and then dropped from the form: the console never shows it back (the service
 * answers only its last four characters). The provider is fixed once created. The base URL is
 * shown as the service answers it (user:password and query values masked): it is sent only when
 * changed, and emptying it sends null (the provider's default address). The service checks an
 * address against the server's outbound policy; its 400 message for a field is shown next to
 * that field.
 */
export function CredentialForm({ credential, onDone }: { credential: Credential | null; onDone: (saved: boolean) => void }) {
  const api = useApi();
  const [values, setValues] = useState({
    name: credential?.name ?? '',
    provider: credential?.provider ?? ('openai' as Provider),
    apiKey: '',
    // Azure's resource endpoint and API version (shown fields of the credential).
    endpoint: String(credential?.fields.endpoint ?? ''),
    apiVersion: String(credential?.fields.apiVersion ?? ''),
    // Bedrock's region and access key id (shown); its secret access key is typed in the key field, its session token below.
    region: String(credential?.fields.region ?? ''),
    accessKeyId: String(credential?.fields.accessKeyId ?? ''),
    sessionToken: '',
    baseUrl: credential?.baseUrl ?? '',
    proxy: credential?.proxy ?? false,
    // New: ticked makes it the default; unticked leaves the default where it is (the first credential of a provider is its default anyway).
    isDefault: credential?.default ?? false,
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const set = (name: 'name' | 'provider' | 'apiKey' | 'endpoint' | 'apiVersion' | 'region' | 'accessKeyId' | 'sessionToken' | 'baseUrl') => (e: Event) =>
    setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value });
  const check = (name: 'proxy' | 'isDefault') => (e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).checked });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      if (credential) {
        const data: BodyOf<'/api/v1/credentials/{id}', 'patch'>['data'] = { name: values.name, proxy: values.proxy };
        const bedrock = credential.provider === 'bedrock';
        if (values.apiKey) data[bedrock ? 'secretAccessKey' : 'apiKey'] = values.apiKey;
        if (bedrock && values.region.trim() !== String(credential.fields.region ?? '')) data.region = values.region.trim();
        if (bedrock && values.accessKeyId.trim() !== String(credential.fields.accessKeyId ?? '')) data.accessKeyId = values.accessKeyId.trim();
        if (bedrock && values.sessionToken) data.sessionToken = values.sessionToken;
        if (credential.provider === 'azure' && values.endpoint.trim() !== String(credential.fields.endpoint ?? '')) data.endpoint = values.endpoint.trim();
        if (credential.provider === 'azure' && values.apiVersion.trim() !== String(credential.fields.apiVersion ?? '')) data.apiVersion = values.apiVersion.trim();
        // The masked address as shown means "unchanged"; empty means the provider's default.
        const baseUrl = values.baseUrl.trim();
        if (baseUrl !== (credential.baseUrl ?? '')) data.baseUrl = baseUrl === '' ? null : baseUrl;
        if (values.isDefault !== credential.default) data.default = values.isDefault;
        await api.call('patch', '/api/v1/credentials/{id}', { params: { id: credential.id }, body: { data } });
      } else {
        const common = {
          name: values.name,
          ...(values.baseUrl.trim() ? { baseUrl: values.baseUrl.trim() } : {}),
          proxy: values.proxy,
          ...(values.isDefault ? { default: true } : {}),
        };
        const provider = values.provider;
        const body: BodyOf<'/api/v1/credentials', 'post'> =
          provider === 'azure'
            ? { ...common, provider, apiKey: values.apiKey, endpoint: values.endpoint.trim(), ...(values.apiVersion.trim() ? { apiVersion: values.apiVersion.trim() } : {}) }
            : provider === 'bedrock'
              ? {
                  ...common,
                  provider,
                  region: values.region.trim(),
                  accessKeyId: values.accessKeyId.trim(),
                  secretAccessKey: values.apiKey,
                  ...(values.sessionToken ? { sessionToken: values.sessionToken } : {}),
                }
              : { ...common, provider, apiKey: values.apiKey };
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

  const field = (name: 'name' | 'apiKey' | 'endpoint' | 'apiVersion' | 'region' | 'accessKeyId' | 'sessionToken' | 'baseUrl', label: string, extra: Record<string, unknown> = {}, hint?: string) => (
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
            <Options values={CREDENTIAL_PROVIDERS} />
          </select>
        </Field>
        {field('name', 'Name', { required: true, maxLength: 100 })}
        {field(
          'apiKey',
          values.provider === 'bedrock' ? (credential ? 'New secret access key' : 'Secret access key') : credential ? 'New API key' : 'API key',
          // A password field: the key is not echoed on screen, and the browser offers no autofill.
          { type: 'password', autocomplete: 'new-password', spellcheck: false, required: credential === null },
          credential ? `Empty keeps the current key (ending in ${credential.apiKeyLast4}).` : 'Stored encrypted; only its last four characters are ever shown.',
        )}
        {values.provider === 'bedrock' && field('region', 'AWS region', { required: true, placeholder: 'us-east-1' })}
        {values.provider === 'bedrock' && field('accessKeyId', 'Access key id', { required: true, spellcheck: false })}
        {values.provider === 'bedrock' &&
          field('sessionToken', 'Session token', { type: 'password', autocomplete: 'new-password', spellcheck: false }, 'Only for temporary (STS) keys; stored encrypted.')}
        {values.provider === 'azure' && field('endpoint', 'Resource endpoint', { type: 'url', required: true, placeholder: 'https://my-resource.openai.azure.com' })}
        {values.provider === 'azure' && field('apiVersion', 'API version', { placeholder: '2024-10-21' }, 'Empty: 2024-10-21, the latest GA version.')}
        {field(
          'baseUrl',
          'Base URL',
          { type: 'url', placeholder: 'https://…' },
          credential?.baseUrl?.includes('****') ? `Shown masked: leave it as it is to keep it. ${DEFAULT_ADDRESS[values.provider]}` : DEFAULT_ADDRESS[values.provider],
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
