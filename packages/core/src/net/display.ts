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
