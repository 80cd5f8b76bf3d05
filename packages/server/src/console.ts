import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { z } from 'zod';
import type { PublicRouteDoc } from './openapi.js';

/**
 * The policy of the pages this server renders, with their image sources: scripts, styles,
 * fonts and API calls from this server only; no inline script or style, no eval (no
 * 'unsafe-inline', no 'unsafe-eval'); no plugins, no <base> rewriting, no framing by any site
 * (clickjacking), forms post here only.
 */
const pagePolicy = (imageSources: string) =>
  [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${imageSources}`,
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join('; ');

/**
 * The console's pages run under this policy: images from this server, and `blob:` images the
 * page makes itself (the images a user attaches to a chat question, shown from their file; an
 * image runs no script).
 */
export const CONSOLE_CSP = pagePolicy("'self' blob:");

/**
 * /docs (swagger-ui) runs under the console's policy, except that its stylesheet draws its icons
 * from `data:` URLs (images only: an image runs no script).
 */
export const DOCS_CSP = pagePolicy("'self' data:");

/**
 * The security headers of a page this server renders and of its files (the console and /docs,
 * both on this origin, where an API key is typed in): under `csp` (which no other site may
 * frame), never sniffed as another type, no referrer sent.
 */
export const pageSecurityHeaders = (csp: string): Readonly<Record<string, string>> => ({
  'content-security-policy': csp,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

/** Headers of the console's page: never cached (it names the current hashed assets), under the CSP. */
export const CONSOLE_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  ...pageSecurityHeaders(CONSOLE_CSP),
};

/** Asset names carry a content hash (Vite's `name-HASH.ext`): a changed file gets a new name, so they are cached for good. */
export const CONSOLE_ASSET_CACHE = 'public, max-age=31536000, immutable';

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/** The built console, read once: its page and its assets by file name. */
export interface ConsoleFiles {
  readonly page: string;
  /** A Map, not an object: the name comes from the URL (`constructor` must not be found). */
  readonly assets: ReadonlyMap<string, { readonly body: Uint8Array; readonly type: string }>;
}

/**
 * The folder of the built console (`@agent-platform/console`'s dist/, a dependency of this
 * package), or undefined when it is not built (then the server runs without it and says so).
 */
export function builtConsoleDir(): string | undefined {
  try {
    const dir = join(dirname(createRequire(import.meta.url).resolve('@agent-platform/console/package.json')), 'dist');
    return existsSync(join(dir, 'index.html')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a built console folder (index.html and assets/). Only the files found here are ever
 * served, by exact name, so a URL cannot reach anything else on the disk.
 */
export function readConsole(dir: string): ConsoleFiles {
  const assets = new Map<string, { body: Uint8Array; type: string }>();
  const assetDir = join(dir, 'assets');
  if (existsSync(assetDir)) {
    for (const item of readdirSync(assetDir, { withFileTypes: true })) {
      const type = TYPES[extname(item.name)];
      if (item.isFile() && type) assets.set(item.name, { body: readFileSync(join(assetDir, item.name)), type });
    }
  }
  return { page: readFileSync(join(dir, 'index.html'), 'utf8'), assets };
}

/** The console's routes as /openapi.json lists them (when the console is on). */
export const consoleRouteDocs: readonly PublicRouteDoc[] = [
  { method: 'GET', path: '/', summary: 'Redirects to the web console', response: { contentType: 'text/html' }, redirect: '/console/' },
  { method: 'GET', path: '/console', summary: 'The web console, also at /console/ (a single page; sign in with an API key)', response: { contentType: 'text/html' } },
  {
    method: 'GET',
    path: '/console/assets/{file}',
    summary: 'Static files of the web console (content-hashed names, cached for good)',
    params: z.object({ file: z.string() }),
    response: { contentType: 'application/octet-stream' },
    errors: ['not_found'],
  },
];
