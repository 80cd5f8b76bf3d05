import { isPlatformError, PlatformError } from '../errors.js';
import { displayUrl } from '../net/display.js';
import type { GuardedFetch } from '../net/guarded-fetch.js';
import { isUnresolvedHost, unreachableAs } from '../net/unresolved-host.js';
import { urlFields } from './fields.js';

/**
 * Refuses an address the outbound policy refuses, before anything is stored: 400 naming the
 * member (`baseUrl`, `endpoint`, under `path`), the host, the address it resolved to and
 * `--allow-host`. A host name that does not resolve is 503 `unavailable` (as adding an MCP server
 * at such an address is): whether the policy allows it cannot be known, and a name that
 * resolves nowhere is usually a typo.
 */
async function checkAddress(fetch: GuardedFetch, url: string, path: readonly string[]): Promise<void> {
  const field = path.join('.');
  try {
    await fetch.check(url);
  } catch (error) {
    if (isUnresolvedHost(error)) throw unreachableAs(field, error);
    if (isPlatformError(error)) {
      throw new PlatformError(error.code, `${field}: ${error.message}`, {
        issues: [{ path, code: 'custom', message: error.message }],
        ...(error.details ? { details: error.details } : {}),
      });
    }
    // The resolver itself failed (no DNS server answered): nothing could be checked.
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new PlatformError('unavailable', `${field}: the address of ${displayUrl(url)} could not be looked up: ${reason}`, { retryable: true, cause: error });
  }
}

/** Checks every address among a credential's members (its `baseUrl`, the provider's address fields such as Azure's `endpoint`), naming each under `path`. */
export async function checkAddresses(fetch: GuardedFetch, provider: string, members: Readonly<Record<string, unknown>>, path: readonly string[]): Promise<void> {
  for (const key of ['baseUrl', ...urlFields(provider)]) {
    const url = members[key];
    if (typeof url === 'string') await checkAddress(fetch, url, [...path, key]);
  }
}
