import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The swagger-ui files /docs needs, served from the installed swagger-ui-dist (no CDN). A Map,
 * not an object: the name comes from the URL, and a plain object would also find `constructor`,
 * `toString` or `__proto__` through its prototype.
 */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

/**
 * Starts swagger-ui. The API key given to "Authorize" stays in the page's memory only:
 * `persistAuthorization` (swagger-ui's one use of Web Storage) would keep it in localStorage on
 * this origin, the console's, readable by any script that ever runs there and kept after the tab
 * closes. What an earlier version of this page kept there (`authorized`) is removed.
 */
const INIT_SCRIPT = `try { localStorage.removeItem('authorized'); } catch {}
window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', persistAuthorization: false });
});
`;

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Agent Platform API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

let assetDir: string | undefined;

/** The bytes and content type of a /docs asset, or undefined for any other name. */
export async function docsAsset(name: string): Promise<{ body: Uint8Array | string; type: string } | undefined> {
  if (name === 'init.js') return { body: INIT_SCRIPT, type: 'text/javascript; charset=utf-8' };
  const type = ASSETS.get(name);
  if (!type) return undefined;
  assetDir ??= dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return { body: await readFile(join(assetDir, name)), type };
}
