import type { ProviderCredential } from '../agent/chat-model.js';
import { PlatformError } from '../errors.js';
import { baseUrlProblem } from '../net/base-url.js';
import { displayUrl, maskUrl } from '../net/display.js';
import type { ResolvedProvider } from '../schemas/projects.js';
import type { SecretBox } from '../security/secrets.js';
import type { CredentialRecord, ProjectRecord, StorageAdapter } from '../storage/types.js';
import { openFields } from './fields.js';

/**
 * Which credential a provider call uses, in order (docs/API.md, "Credentials"):
 * 1. the credential the project names (`credentialId`);
 * 2. else the caller's default credential of the provider (`isDefault`);
 * 3. else none: the operator's environment (the server's `OPENAI_API_KEY` / `OPENAI_BASE_URL`,
 *    `OLLAMA_HOST`).
 * `isValid` decides nothing here: a credential that failed its test is still the one asked for,
 * and calls fail saying so rather than move to another upstream.
 * A credential without `baseUrl` sends its key to the provider's default address (the same
 * environment address a call without a credential uses).
 */
export interface CredentialChoice {
  readonly record: CredentialRecord | undefined;
  readonly source: ResolvedProvider['source'];
}

/** What a provider call needs from the chosen credential: its fields and address, unsealed. */
export type UsableCredential = ProviderCredential;

/** Where a provider's calls go when no credential names an address (the server's environment). */
export type DefaultBaseUrl = (provider: string) => string | undefined;

/** The error of a `credentialId` that is not one of the caller's credentials of the provider. */
function unusable(id: string, why: string): PlatformError {
  return new PlatformError('not_found', `credentialId: ${why}`, { issues: [{ path: ['credentialId'], code: 'custom', message: why }], details: { credentialId: id } });
}

/**
 * Checks that `credentialId` names one of the caller's credentials of `provider`: 404
 * `not_found` for an unknown or another user's id (as a missing one), 400 for another provider.
 */
export async function checkNamedCredential(storage: StorageAdapter, userId: string, credentialId: string, provider: string): Promise<void> {
  const record = await storage.credentials.get(userId, credentialId);
  if (!record) throw unusable(credentialId, `credential ${credentialId} not found`);
  if (record.provider !== provider) {
    const why = `credential ${credentialId} is for provider ${record.provider}, the project uses ${provider}`;
    throw PlatformError.invalid(`credentialId: ${why}`, [{ path: ['credentialId'], code: 'custom', message: why }]);
  }
}

/** The credential a call of `provider` uses for the caller (and the project, when there is one). */
export async function chooseCredential(storage: StorageAdapter, userId: string, provider: string, credentialId: string | null | undefined): Promise<CredentialChoice> {
  if (credentialId) {
    const record = await storage.credentials.get(userId, credentialId);
    // Deleting a named credential is refused (409), so this is a credential lost some other way:
    // say so rather than fall back to another upstream.
    if (!record) throw unusable(credentialId, `credential ${credentialId}, named by the project, no longer exists: set the project's credentialId`);
    return { record, source: 'project' };
  }
  const chosen = await storage.credentials.defaultOf(userId, provider);
  return chosen ? { record: chosen, source: 'default' } : { record: undefined, source: 'environment' };
}

/**
 * The chosen credential's key and address, unsealed, for the call itself. A stored `baseUrl`
 * with a query string or fragment (saved before base URLs were refused those) is refused here,
 * at the call: 400 naming the credential and how to fix it, nothing sent.
 */
export function unseal(record: CredentialRecord, box: SecretBox): UsableCredential {
  const baseUrl = record.baseUrlSecret ? box.open(record.baseUrlSecret) : record.baseUrl;
  const problem = baseUrl === null ? undefined : baseUrlProblem(baseUrl);
  if (problem) {
    throw PlatformError.invalid(`Credential ${record.id} cannot be used: its baseUrl ${problem}; give it a new baseUrl (PATCH /api/v1/credentials/${record.id})`, [
      { path: ['baseUrl'], code: 'custom', message: problem },
    ]);
  }
  const fields = openFields(record, box);
  return { id: record.id, name: record.name, ...(typeof fields.apiKey === 'string' ? { apiKey: fields.apiKey } : {}), fields, baseUrl, proxy: record.proxy };
}

/** What a project's answer shows of the choice: the credential's id and the address, masked; never the key. */
export function describeChoice(project: ProjectRecord, choice: CredentialChoice, defaultBaseUrl: DefaultBaseUrl | undefined): ResolvedProvider {
  return { credentialId: choice.record?.id ?? null, baseUrl: shownBaseUrl(project.provider, choice.record, defaultBaseUrl), source: choice.source };
}

/** Where a provider's calls with `record` (or without a credential) go, as answers show it: masked, or null when not known. */
export function shownBaseUrl(provider: string, record: CredentialRecord | undefined, defaultBaseUrl: DefaultBaseUrl | undefined): string | null {
  const own = record?.baseUrl;
  const fallback = provider === 'local' ? undefined : defaultBaseUrl?.(provider);
  return own ? maskUrl(own).masked : fallback ? displayUrl(fallback) : null;
}
