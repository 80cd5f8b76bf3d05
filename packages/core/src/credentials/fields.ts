import { PlatformError } from '../errors.js';
import { maskUrl } from '../net/display.js';
import { isModelProvider, MODEL_PROVIDERS, type ModelProviderEntry } from '../registries/model-providers.js';
import type { SecretBox } from '../security/secrets.js';
import type { CredentialRecord, ShownCredentialFields } from '../storage/types.js';

/** A credential's provider fields, unsealed (`apiKey`, Bedrock's keys and region, Azure's endpoint, ...). */
export type CredentialFields = Readonly<Record<string, unknown>>;

/** The members of the credential routes' bodies that are not provider fields. */
const COMMON_MEMBERS = new Set(['name', 'provider', 'baseUrl', 'proxy', 'default', 'isValid', 'id']);

const entryOf = (provider: string): ModelProviderEntry | undefined => (isModelProvider(provider) ? MODEL_PROVIDERS[provider] : undefined);

/** The provider fields among a create body's or an update's members (those that are given). */
export function fieldsOf(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key, value]) => !COMMON_MEMBERS.has(key) && value !== undefined));
}

/** The fields of `provider` that are addresses (checked against the outbound policy when saved). */
export function urlFields(provider: string): readonly string[] {
  return entryOf(provider)?.urls ?? [];
}

/**
 * Refuses the fields of an update that are not fields of the credential's provider: 400 naming
 * each (`data.region` on an OpenAI credential), nothing changed.
 */
export function checkFieldsOf(provider: string, fields: Readonly<Record<string, unknown>>): void {
  const own = entryOf(provider)?.fields?.shape ?? {};
  const foreign = Object.keys(fields).filter((key) => !Object.hasOwn(own, key));
  if (foreign.length === 0) return;
  const why = `not a field of ${provider} credentials (they have ${Object.keys(own).join(', ')})`;
  throw PlatformError.invalid(
    foreign.map((key) => `data.${key}: ${why}`).join('; '),
    foreign.map((key) => ({ path: ['data', key], code: 'custom', message: why })),
  );
}

/**
 * What is stored of a credential's fields: every field sealed together as JSON (`secret`), and
 * the shown form (`fields`: values of the fields that are not secrets, addresses masked; the
 * last four characters of each secret). `last4` is the first secret's, for `apiKeyLast4`.
 */
export function sealFields(provider: string, fields: CredentialFields, box: SecretBox): Pick<CredentialRecord, 'secret' | 'last4' | 'fields'> {
  const entry = entryOf(provider);
  const secrets = entry?.secrets ?? ['apiKey'];
  const urls = new Set(entry?.urls ?? []);
  const shown: ShownCredentialFields = { values: {}, last4: {} };
  for (const [key, value] of Object.entries(fields)) {
    if (secrets.includes(key)) (shown.last4 as Record<string, string>)[key] = String(value).slice(-4);
    else (shown.values as Record<string, unknown>)[key] = urls.has(key) && typeof value === 'string' ? maskUrl(value).masked : value;
  }
  const first = secrets.find((key) => typeof fields[key] === 'string');
  return { secret: box.seal(JSON.stringify(fields)), last4: first ? String(fields[first]).slice(-4) : '', fields: shown };
}

/** The stored fields with an update's given ones: a value replaces, null removes (an optional field). */
export function mergeFields(stored: CredentialFields, given: Readonly<Record<string, unknown>>): CredentialFields {
  const merged: Record<string, unknown> = { ...stored, ...given };
  for (const [key, value] of Object.entries(given)) if (value === null) delete merged[key];
  return merged;
}

/** A credential's fields, unsealed: the sealed JSON, or `{ apiKey }` for a credential stored before fields existed. */
export function openFields(record: CredentialRecord, box: SecretBox): CredentialFields {
  const opened = box.open(record.secret);
  return record.fields === null ? { apiKey: opened } : (JSON.parse(opened) as CredentialFields);
}

/** The values of a credential's secret fields, to keep out of any message. */
export function secretValues(provider: string, fields: CredentialFields): string[] {
  const secrets = entryOf(provider)?.secrets ?? ['apiKey'];
  return secrets.map((key) => fields[key]).filter((value): value is string => typeof value === 'string');
}
