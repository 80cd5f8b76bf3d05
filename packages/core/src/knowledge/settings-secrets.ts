import { PlatformError } from '../errors.js';
import { MASK } from '../net/display.js';
import { isVectorStore, VECTOR_STORE_IDS, VECTOR_STORES } from '../registries/vector-stores.js';
import type { KnowledgeSettings } from '../schemas/knowledge.js';
import type { SecretBox } from '../security/secrets.js';

/**
 * Every key any provider treats as secret (each provider's `secretKeys` in
 * registries/vector-stores.ts): a project on the built-in store, or with no provider yet, seals
 * them all.
 */
const ALL_SECRET_KEYS = [...new Set(VECTOR_STORE_IDS.flatMap((id) => VECTOR_STORES[id].secretKeys))];

/** The member of stored settings that holds the sealed secrets (the request schema refuses it, so only the service writes it). */
const SEALED = 'vectorStoreSecrets';

/** The keys of `vectorStoreConfig` that are secrets for the settings' provider. */
const secretKeys = (settings: KnowledgeSettings): readonly string[] => {
  const provider = settings.vectorstoreProvider;
  return provider !== undefined && isVectorStore(provider) ? VECTOR_STORES[provider].secretKeys : ALL_SECRET_KEYS;
};

/** How a secret is answered: `****` and its last four characters (none for a key shorter than 8). */
export const redactSecret = (value: string): string => `${MASK}${value.length >= 8 ? value.slice(-4) : ''}`;

/** The settings as answers show them: every secret of `vectorStoreConfig` redacted. */
export function redactSettings(settings: KnowledgeSettings): KnowledgeSettings {
  const config = settings.vectorStoreConfig;
  if (!config) return settings;
  const shown: Record<string, unknown> = { ...config };
  for (const key of secretKeys(settings)) if (typeof shown[key] === 'string') shown[key] = redactSecret(shown[key] as string);
  return { ...settings, vectorStoreConfig: shown };
}

/**
 * New settings with the stored secrets put back where the caller sent a secret's redacted form
 * (what GET answered), so settings can be sent back as they were read: a value equal to the
 * redaction of the stored one, for the same provider, keeps the stored secret. Any other value
 * that starts with `****` is refused (`invalid_request`), so a redaction is never stored as a key.
 */
export function restoreRedacted(next: KnowledgeSettings, previous: KnowledgeSettings): KnowledgeSettings {
  const config = next.vectorStoreConfig;
  if (!config) return next;
  const restored: Record<string, unknown> = { ...config };
  const before = previous.vectorStoreConfig ?? {};
  const sameProvider = (previous.vectorstoreProvider ?? 'builtin') === (next.vectorstoreProvider ?? 'builtin');
  for (const key of secretKeys(next)) {
    const value = restored[key];
    if (typeof value !== 'string' || !value.startsWith(MASK)) continue;
    const stored = before[key];
    if (sameProvider && typeof stored === 'string' && redactSecret(stored) === value) {
      restored[key] = stored;
      continue;
    }
    throw PlatformError.invalid(
      `settings.vectorStoreConfig.${key}: "${value}" is a redacted value that matches no stored ${key} of this project's ${next.vectorstoreProvider ?? 'builtin'} store; send the ${key} itself`,
      [{ path: ['settings', 'vectorStoreConfig', key], code: 'custom', message: 'redacted value that matches no stored secret' }],
    );
  }
  return { ...next, vectorStoreConfig: restored };
}

/**
 * Settings as they are stored: the secrets of `vectorStoreConfig` taken out and sealed together
 * under one member. Without a box, settings with a secret are refused (`unsupported`), as
 * credentials are: a secret is never stored in the clear.
 */
export function sealSettings(settings: KnowledgeSettings, box: SecretBox | undefined): Record<string, unknown> {
  const config = settings.vectorStoreConfig;
  if (!config) return { ...settings };
  const kept: Record<string, unknown> = { ...config };
  const secrets: Record<string, unknown> = {};
  for (const key of secretKeys(settings)) {
    if (kept[key] === undefined) continue;
    secrets[key] = kept[key];
    delete kept[key];
  }
  if (Object.keys(secrets).length === 0) return { ...settings };
  if (!box) throw new PlatformError('unsupported', 'Vector store secrets need a master key: construct AgentPlatform with `secrets`');
  return { ...settings, vectorStoreConfig: kept, [SEALED]: box.seal(JSON.stringify(secrets)) };
}

/** Stored settings with their sealed secrets opened back into `vectorStoreConfig`. */
export function openSettings(stored: Record<string, unknown>, box: SecretBox | undefined): KnowledgeSettings {
  const { [SEALED]: sealed, ...settings } = stored;
  if (typeof sealed !== 'string') return settings as KnowledgeSettings;
  if (!box) throw new PlatformError('unsupported', 'Vector store secrets need a master key: construct AgentPlatform with `secrets`');
  const secrets = JSON.parse(box.open(sealed)) as Record<string, unknown>;
  return { ...settings, vectorStoreConfig: { ...(settings.vectorStoreConfig as Record<string, unknown> | undefined), ...secrets } } as KnowledgeSettings;
}
