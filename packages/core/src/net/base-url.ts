/**
 * Why `value` cannot be a base URL, one that clients append paths to (`/chat/completions`,
 * `/api/tags`, `/collections/...`): a query string or a fragment, even an empty `?` or `#`,
 * which would take the appended path into itself and leave the caller to choose the whole
 * path. Undefined when it has neither (or is not a URL: the URL check says so).
 *
 * @example
 * baseUrlProblem('http://models.example/v1?x=/') // 'must not have a query string or fragment (paths are appended to a base URL)'
 */
export function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  // `href` keeps an empty `?` or `#` that `search` and `hash` report as ''; neither character
  // appears anywhere else in a serialised URL (the path and user info have them escaped).
  return /[?#]/.test(url.href) ? 'must not have a query string or fragment (paths are appended to a base URL)' : undefined;
}
