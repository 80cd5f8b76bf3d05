/** A server address as messages name it: the URL without credentials, query or fragment. */
export function displayUrl(baseURL: string): string {
  try {
    const url = new URL(baseURL);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.href.replace(/\/+$/, '');
  } catch {
    return baseURL;
  }
}

/** What stands for a secret value in answers: `****`, with at most the last four characters after it. */
export const MASK = '****';

/**
 * A URL with its secret parts masked: user and password, and every query value, become
 * `****` (`https://****:****@host/v1?key=****`); the fragment goes. `secret` tells whether
 * there was anything to hide (then the URL itself is a secret, to be sealed). A string that is
 * not a URL is answered as it is, with `secret` false.
 */
export function maskUrl(value: string): { masked: string; secret: boolean } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { masked: value, secret: false };
  }
  const secret = url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '';
  if (!secret) return { masked: value, secret };
  if (url.username) url.username = MASK;
  if (url.password) url.password = MASK;
  const query = [...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=${MASK}`).join('&');
  url.search = query;
  url.hash = '';
  return { masked: url.href, secret };
}

/**
 * What an error answer may add to an upstream's status: the short word of its error object
 * (OpenAI's `{ error: { code, type } }`: `invalid_api_key`, `model_not_found`,
 * `rate_limit_exceeded`), as ` (word)`, or nothing. Never the upstream's own text: an address a
 * caller chose could answer anything there (another service's data), and answers must not
 * become a way to read it.
 */
export function safeReason(body: unknown): string {
  const inner = typeof body === 'object' && body !== null && 'error' in body ? (body as { error: unknown }).error : body;
  for (const key of ['code', 'type']) {
    const word = typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>)[key] : undefined;
    if (typeof word === 'string' && /^[A-Za-z][\w.-]{0,63}$/.test(word)) return ` (${word})`;
  }
  return '';
}
