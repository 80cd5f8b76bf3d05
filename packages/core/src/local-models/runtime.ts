import type { LocalModel } from '../schemas/local-models.js';

/**
 * A local model runtime (Ollama or compatible) at a base URL the caller gives.
 *
 * Failures are `PlatformError`s whose `code` tells them apart:
 * - `unavailable`: nothing answers at the base URL (the runtime is not running), or its host
 *   name does not resolve (`isUnresolvedHost`; the message says so);
 * - `not_found`: `delete` of a model that is not installed;
 * - `upstream_error`: the runtime answered, but with an error or something unreadable;
 * - `timeout`: the runtime did not answer in time;
 * - `invalid_request`: the base URL is refused by the outbound URL policy (nothing was sent).
 */
export interface LocalModelRuntime {
  /** The installed models; empty when none are. */
  list(baseUrl: string): Promise<LocalModel[]>;
  /** Deletes one model, named exactly (with its tag). */
  delete(baseUrl: string, name: string): Promise<void>;
}

/** Ollama's standard local address. */
export const DEFAULT_LOCAL_MODEL_URL = 'http://127.0.0.1:11434';

/**
 * The runtime address the service uses when a call gives none: `OLLAMA_HOST` as Ollama reads
 * it (`host`, `host:port` or a URL; without a scheme a missing port is 11434; the bind-all addresses 0.0.0.0 and
 * :: mean this machine), else http://127.0.0.1:11434.
 */
export function defaultLocalModelBaseUrl(env: Record<string, string | undefined> = process.env): string {
  const raw = env.OLLAMA_HOST?.trim();
  if (!raw) return DEFAULT_LOCAL_MODEL_URL;
  const schemeGiven = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw);
  const withScheme = schemeGiven ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return DEFAULT_LOCAL_MODEL_URL;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return DEFAULT_LOCAL_MODEL_URL;
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  // As Ollama reads it: without a scheme the default port is 11434; with one, the scheme's.
  if (!schemeGiven && url.port === '' && !/:\d+(\/|$)/.test(raw)) url.port = '11434';
  return url.href.replace(/\/+$/, '');
}
