import { maskUrl } from '../net/display.js';
import type { Credential } from '../schemas/credentials.js';
import type { SecretBox } from '../security/secrets.js';
import type { CredentialRecord } from '../storage/types.js';

/** A stored credential as the API shows it: the address masked, never the key. */
export function toCredential(record: CredentialRecord): Credential {
  return {
    id: record.id,
    name: record.name,
    provider: record.provider as Credential['provider'],
    // Masked again: a row stored before URLs were sealed still holds its URL whole.
    baseUrl: record.baseUrl === null ? null : maskUrl(record.baseUrl).masked,
    proxy: record.proxy,
    isValid: record.isValid,
    default: record.isDefault,
    apiKeyLast4: record.last4,
    fields: { ...record.fields?.values },
    secretsLast4: record.fields ? { ...record.fields.last4 } : { apiKey: record.last4 },
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** The stored form of a base URL: masked, and sealed whole when it carries user:password or a query. */
export function storedUrl(url: string | null, box: SecretBox): Pick<CredentialRecord, 'baseUrl' | 'baseUrlSecret'> {
  if (url === null) return { baseUrl: null, baseUrlSecret: null };
  const { masked, secret } = maskUrl(url);
  return { baseUrl: masked, baseUrlSecret: secret ? box.seal(url) : null };
}
