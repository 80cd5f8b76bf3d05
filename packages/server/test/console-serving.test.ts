import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { builtConsoleDir, CONSOLE_CSP } from '../src/console.js';

// The server's side of the web console: the page, its assets, the redirect of `/`, the headers
// that keep it safe and cacheable, and --no-console. The console itself is tested in a real
// browser in packages/console/test.

let dir: string;
const PAGE = '<!doctype html><title>console</title><script type="module" src="/console/assets/index-abc123.js"></script>';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-console-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), PAGE);
  await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  await writeFile(join(dir, 'assets', 'index-def456.css'), 'body{}');
  // Not a type the console ships: never served.
  await writeFile(join(dir, 'assets', 'notes.txt'), 'secret');
  await writeFile(join(dir, 'secret.json'), '{}');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const platform = () => new AgentPlatform({ storage: memoryStorage() });

describe('the web console, served', () => {
  it('redirects / to /console/, which answers the page under a strict CSP, never cached', async () => {
    const app = createApp(platform(), { consoleDir: dir });
    const res = await app.request('/', { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/console/');
    expect(await (await app.request('/console')).text()).toBe(PAGE);
    const page = await app.request('/console/');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(PAGE);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toBe(CONSOLE_CSP);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers hashed assets as immutable, and nothing else from the disk', async () => {
    const app = createApp(platform(), { consoleDir: dir });
    const js = await app.request('/console/assets/index-abc123.js');
    expect(js.status).toBe(200);
    expect(await js.text()).toBe('console.log(1)');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await app.request('/console/assets/index-def456.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    for (const path of ['/console/assets/notes.txt', '/console/assets/..%2Fsecret.json', '/console/assets/constructor', '/console/assets/__proto__', '/console/index.html', '/console/secret.json']) {
      const res = await app.request(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ success: false, code: 'not_found' });
    }
  });

  it('lists its routes in /openapi.json when on; without it / and /console/ are 404 and undocumented', async () => {
    const on = await (await createApp(platform(), { consoleDir: dir }).request('/openapi.json')).json();
    expect(Object.keys(on.paths)).toEqual(expect.arrayContaining(['/', '/console', '/console/assets/{file}']));
    expect(on.paths['/'].get.responses['302'].headers.Location.schema.const).toBe('/console/');
    const off = createApp(platform());
    const document = await (await off.request('/openapi.json')).json();
    expect(Object.keys(document.paths).filter((p) => p === '/' || p.startsWith('/console'))).toEqual([]);
    for (const path of ['/', '/console/', '/console/assets/index-abc123.js']) expect((await off.request(path)).status, path).toBe(404);
  });

  it('finds the built console of the workspace (pnpm run build builds it)', () => {
    const built = builtConsoleDir();
    expect(built).toMatch(/console[/\\]dist$/);
  });
});
