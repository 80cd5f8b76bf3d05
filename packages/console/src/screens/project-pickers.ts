import { useEffect, useState } from 'preact/hooks';
import { type Api, messageOf, type ResultOf } from '../api/client';
import { CREDENTIAL_PROVIDERS } from '../api/enums';

export type CredentialItem = ResultOf<'/api/v1/credentials', 'get'>['credentials'][number];
type ModelList = ResultOf<'/api/v1/credentials/{id}/models', 'get'>;

/** Providers that have a credential and a model list; `local` has neither. */
type Listed = (typeof CREDENTIAL_PROVIDERS)[number];
const isListed = (provider: string): provider is Listed => (CREDENTIAL_PROVIDERS as readonly string[]).includes(provider);

/** The caller's credentials (all providers), or the message of the failed read. */
export function useCredentials(api: Api): { credentials: CredentialItem[]; error: string | null } {
  const [credentials, setCredentials] = useState<CredentialItem[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    api
      .call('get', '/api/v1/credentials', { signal: abort.signal })
      .then((r) => setCredentials(r.credentials))
      .catch((e) => abort.signal.aborted || setError(messageOf(e)));
    return () => abort.abort();
  }, []);
  return { credentials, error };
}

/** Where a model list is: being asked, answered (the upstream's models and where they were asked), failed, or none for the provider. */
export type Models =
  | { readonly state: 'none' }
  | { readonly state: 'loading' }
  | { readonly state: 'loaded'; readonly ids: readonly string[]; readonly baseUrl: string | null }
  | { readonly state: 'failed'; readonly message: string };

/**
 * The models the project's upstream offers, for the model picker: with the credential chosen
 * (`credentialId`), or with what a project naming none uses (`/api/v1/credentials/default/models`:
 * the caller's default credential of the provider, else the server's OPENAI_BASE_URL or
 * OLLAMA_HOST; for Ollama, the installed models of the runtime the project will call).
 * Asked again when the provider or the credential changes; the answer of an older choice is dropped.
 */
export function useModels(api: Api, provider: string, credentialId: string): Models {
  const [models, setModels] = useState<Models>({ state: 'none' });
  useEffect(() => {
    if (!isListed(provider)) {
      setModels({ state: 'none' });
      return;
    }
    const abort = new AbortController();
    setModels({ state: 'loading' });
    const asked: Promise<ModelList> = credentialId
      ? api.call('get', '/api/v1/credentials/{id}/models', { params: { id: credentialId }, signal: abort.signal })
      : api.call('get', '/api/v1/credentials/default/models', { query: { provider }, signal: abort.signal });
    asked.then((r) => setModels({ state: 'loaded', ids: r.models.map((m) => m.id), baseUrl: r.baseUrl })).catch((e) => abort.signal.aborted || setModels({ state: 'failed', message: messageOf(e) }));
    return () => abort.abort();
  }, [provider, credentialId]);
  return models;
}

/** The line under the model field: what the list holds, or why there is none. Typing any name stays possible. */
export function modelsHint(models: Models): string {
  switch (models.state) {
    case 'none':
      return 'Type the model name.';
    case 'loading':
      return 'Asking the provider for its models…';
    case 'failed':
      return `Could not list the provider's models: ${models.message}. Type the model name.`;
    case 'loaded':
      return models.ids.length === 0
        ? `The provider${models.baseUrl ? ` at ${models.baseUrl}` : ''} lists no models. Type the model name.`
        : `${models.ids.length} model${models.ids.length === 1 ? '' : 's'} offered${models.baseUrl ? ` by ${models.baseUrl}` : ''}; any other name can be typed.`;
  }
}
