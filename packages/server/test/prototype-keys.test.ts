import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicRoutes } from '../src/app.js';
import { apiRoutes } from '../src/routes.js';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * Names that exist on every plain object through `Object.prototype` (`__proto__`, `constructor`,
 * `toString`, `hasOwnProperty`, ...): a lookup in a plain object keyed by client input finds
 * them, so a route that does one answers 500 or worse. Every path parameter of every route gets
 * each of them and must answer a client error, never a 5xx.
 */
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

describe('prototype names as path parameters', () => {
  const routes = [
    ...apiRoutes.map((r) => ({ method: r.method, path: r.path, body: r.body !== undefined, key: true })),
    ...publicRoutes.map((r) => ({ method: r.method, path: r.path, body: false, key: false })),
  ];
  const withParams = routes.filter((r) => r.path.includes('{'));

  it('covers every route with a path parameter', () => {
    expect(PROTOTYPE_NAMES).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']));
    expect(withParams.length).toBeGreaterThanOrEqual(20);
    expect(withParams.map((r) => r.path)).toContain('/docs/{file}');
  });

  it('never answers 5xx when a path parameter is a name of Object.prototype', async () => {
    const failures: string[] = [];
    for (const route of withParams) {
      for (const name of PROTOTYPE_NAMES) {
        const path = route.path.replace(/\{\w+\}/g, encodeURIComponent(name));
        const headers: Record<string, string> = route.key ? { authorization: `Bearer ${s.keyA}` } : {};
        if (route.body) headers['content-type'] = 'application/json';
        const res = await fetch(s.url + path, {
          method: route.method,
          headers,
          ...(route.body ? { body: '{}' } : {}),
          signal: AbortSignal.timeout(10_000),
        });
        // Only the status matters; an event stream (which no route should open here) is not read.
        await res.body?.cancel();
        if (res.status >= 500) failures.push(`${route.method} ${path} → ${res.status}`);
        else expect(res.status, `${route.method} ${path}`).toBeGreaterThanOrEqual(400);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
