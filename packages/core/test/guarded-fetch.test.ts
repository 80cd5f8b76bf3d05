import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isPlatformError } from '../src/errors.js';
import { createGuardedFetch, type GuardedFetch, type HostResolver, type ResolvedAddress } from '../src/net/guarded-fetch.js';
import { createOutboundPolicy } from '../src/net/policy.js';
import { isUnresolvedHost } from '../src/net/unresolved-host.js';
import { forbidConnects, watchConnects } from './net-guard.js';

/**
 * Only 127.0.0.1 servers are ever contacted. Every test that may connect goes through
 * `watchConnects` (only loopback gets through); tests that expect a refusal replace
 * `net.connect` and `tls.connect` with functions that throw. So even a broken guard cannot
 * send traffic off the machine.
 */

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let port: number;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      seen.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const target = /^\/redirect\?(\d{3})&to=(.+)$/.exec(path);
      if (target) {
        res.writeHead(Number(target[1]), { location: decodeURIComponent(target[2] ?? '') }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${path}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const fetches: GuardedFetch[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  seen.length = 0;
  await Promise.all(fetches.splice(0).map((f) => f.close()));
});

/** A resolver answering from a table, recording each call in `events`. */
function stubResolver(table: Record<string, ResolvedAddress[] | (() => ResolvedAddress[])>, events: string[]): HostResolver {
  return async (hostname) => {
    events.push(`lookup:${hostname}`);
    const entry = table[hostname];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return typeof entry === 'function' ? entry() : entry;
  };
}

/** A guarded fetch; by default 127.0.0.1 (where the test server listens) is allowed, as `--allow-host 127.0.0.1` does. */
function guarded(lookup: HostResolver, allowedHosts: string[] = ['127.0.0.1'], allowlistOnly = false): GuardedFetch {
  const f = createGuardedFetch(createOutboundPolicy({ allowedHosts, allowlistOnly }), { lookup });
  fetches.push(f);
  return f;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

const loopback: ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }];

describe('createGuardedFetch: allowed targets', () => {
  it('fetches from a loopback address (IP literal: no lookup)', async () => {
    const events: string[] = [];
    watchConnects(events);
    const f = guarded(stubResolver({}, events));
    const response = await f(`http://127.0.0.1:${port}/hello`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('hello from /hello');
    expect(events).toEqual([`connect:127.0.0.1:${port}`]);
  });

  it('resolves a host name once, checks it, and connects to the checked address', async () => {
    const events: string[] = [];
    watchConnects(events);
    const f = guarded(stubResolver({ 'models.test': loopback }, events));
    const response = await f(`http://models.test:${port}/x`, { headers: { 'x-test': '1' } });
    expect(await response.text()).toBe('hello from /x');
    // The name goes to the socket, but its lookup answers only the pre-checked address.
    expect(events).toEqual(['lookup:models.test', `connect:models.test:${port}`]);
    expect(seen[0]?.headers.host).toBe(`models.test:${port}`);
    expect(seen[0]?.headers['x-test']).toBe('1');
  });

  it('passes method, headers and body through, and accepts a Request', async () => {
    watchConnects([]);
    const f = guarded(stubResolver({}, []));
    const response = await f(new Request(`http://127.0.0.1:${port}/post`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } }));
    expect(response.status).toBe(200);
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/post', body: '{"a":1}' });
    expect(seen[0]?.headers['content-type']).toBe('application/json');
  });

  it('reaches only allow-listed hosts in allowlistOnly mode', async () => {
    const events: string[] = [];
    forbidConnects(events);
    const refused = await rejection(guarded(stubResolver({}, events), [], true)(`http://127.0.0.1:${port}/`));
    expect(isPlatformError(refused)).toBe(true);
    expect((refused as Error).message).toBe(`Refused to connect to 127.0.0.1: not in the allowed hosts (--allowed-hosts-only); allow it with --allow-host 127.0.0.1:${port}`);
    expect(events).toEqual([]);
    vi.restoreAllMocks();
    watchConnects([]);
    const allowed = await guarded(stubResolver({}, []), ['127.0.0.0/8'], true)(`http://127.0.0.1:${port}/ok`);
    expect(await allowed.text()).toBe('hello from /ok');
  });

  it('check() resolves and checks without connecting', async () => {
    const events: string[] = [];
    forbidConnects(events);
    const f = guarded(stubResolver({ 'models.test': loopback }, events));
    const target = await f.check(`http://models.test:${port}/`);
    expect(target.host).toBe('models.test');
    expect(target.addresses).toEqual(loopback);
    expect(events).toEqual(['lookup:models.test']);
  });
});

describe('createGuardedFetch: refusals happen before any connection', () => {
  it('refuses a host name resolving to a private address, without connecting', async () => {
    const events: string[] = [];
    forbidConnects(events);
    const f = guarded(stubResolver({ 'ollama.internal': [{ address: '10.0.0.5', family: 4 }] }, events));
    const error = await rejection(f('http://ollama.internal:11434/api/tags'));
    expect(isPlatformError(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'invalid_request',
      message: 'Refused to connect to ollama.internal (10.0.0.5): private address; allow it with --allow-host ollama.internal:11434',
    });
    expect(events).toEqual(['lookup:ollama.internal']);
  });

  it('refuses IP literals of metadata, private and mapped addresses without a lookup or a connection', async () => {
    const events: string[] = [];
    forbidConnects(events);
    const f = guarded(stubResolver({}, events));
    const cases: [string, string][] = [
      ['http://169.254.169.254/latest/meta-data/', 'Refused to connect to 169.254.169.254: cloud metadata address; allow it with --allow-host 169.254.169.254:80'],
      ['http://10.0.0.5:11434/', 'Refused to connect to 10.0.0.5: private address; allow it with --allow-host 10.0.0.5:11434'],
      ['http://[::ffff:10.0.0.1]/', 'Refused to connect to ::ffff:a00:1: private address (embeds 10.0.0.1); allow it with --allow-host [::ffff:a00:1]:80'],
      ['https://[fe80::1]/', 'Refused to connect to fe80::1: link-local address; allow it with --allow-host [fe80::1]:443'],
      ['http://0.0.0.0:11434/', 'Refused to connect to 0.0.0.0: unspecified address; allow it with --allow-host 0.0.0.0:11434'],
      ['http://167772165/', 'Refused to connect to 10.0.0.5: private address; allow it with --allow-host 10.0.0.5:80'], // 10.0.0.5 as one number
    ];
    for (const [url, message] of cases) {
      expect(await rejection(f(url)), url).toMatchObject({ code: 'invalid_request', message });
    }
    expect(events).toEqual([]);
  });

  it('refuses when any resolved address is refused', async () => {
    const events: string[] = [];
    forbidConnects(events);
    const f = guarded(stubResolver({ 'mixed.test': [...loopback, { address: 'fd00::5', family: 6 }] }, events));
    expect(await rejection(f(`http://mixed.test:${port}/`))).toMatchObject({
      message: `Refused to connect to mixed.test (fd00::5): private address; allow it with --allow-host mixed.test:${port}`,
    });
    expect(events).toEqual(['lookup:mixed.test']);
  });

  it('refuses a host that starts resolving elsewhere (DNS rebinding) on the next request', async () => {
    const events: string[] = [];
    let answers = 0;
    const f = guarded(stubResolver({ 'rebind.test': () => (answers++ === 0 ? loopback : [{ address: '10.0.0.5', family: 4 }]) }, events));
    watchConnects(events);
    expect(await (await f(`http://rebind.test:${port}/first`)).text()).toBe('hello from /first');
    vi.restoreAllMocks();
    forbidConnects(events);
    expect(await rejection(f(`http://rebind.test:${port}/second`))).toMatchObject({ code: 'invalid_request' });
    expect(events).toEqual(['lookup:rebind.test', `connect:rebind.test:${port}`, 'lookup:rebind.test']);
    expect(seen.map((s) => s.path)).toEqual(['/first']);
  });

  it('refuses non-http schemes and invalid URLs', async () => {
    forbidConnects([]);
    const f = guarded(stubResolver({}, []));
    expect(await rejection(f('file:///etc/passwd'))).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('only http and https') });
    expect(await rejection(f('not a url'))).toMatchObject({ code: 'invalid_request', message: 'Invalid URL: not a url' });
  });

  it('says when the name does not resolve (ENOTFOUND, EAI_AGAIN, no address), as its own error', async () => {
    forbidConnects([]);
    const f = guarded(stubResolver({ 'empty.test': [] }, []));
    const error = await rejection(f('http://nowhere.test/'));
    expect(error).toMatchObject({ code: 'unavailable', message: "host name 'nowhere.test' does not resolve", retryable: false, details: { host: 'nowhere.test', dns: 'ENOTFOUND' } });
    expect(isUnresolvedHost(error)).toBe(true);
    expect(await rejection(f.check('http://empty.test/'))).toMatchObject({ code: 'unavailable', message: "host name 'empty.test' does not resolve" });
    const later = guarded(async () => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN later.test'), { code: 'EAI_AGAIN' });
    });
    expect(await rejection(later('http://later.test/'))).toMatchObject({ message: expect.stringMatching(/^host name 'later.test' does not resolve \(/), retryable: true });
    // Other resolver failures stay fetch's network failure.
    const broken = guarded(async () => {
      throw Object.assign(new Error('resolver crashed'), { code: 'ECONNREFUSED' });
    });
    const other = await rejection(broken('http://broken.test/'));
    expect(other).toBeInstanceOf(TypeError);
    expect(isUnresolvedHost(other)).toBe(false);
  });
});

describe('createGuardedFetch: redirects are checked hop by hop', () => {
  const redirect = (status: number, to: string) => `http://127.0.0.1:${port}/redirect?${status}&to=${encodeURIComponent(to)}`;

  it('follows an allowed redirect', async () => {
    watchConnects([]);
    const f = guarded(stubResolver({}, []));
    const response = await f(redirect(302, `http://127.0.0.1:${port}/landed`));
    expect(await response.text()).toBe('hello from /landed');
    expect(response.url).toBe(`http://127.0.0.1:${port}/landed`);
  });

  it('refuses a redirect to a metadata address before connecting to it', async () => {
    const events: string[] = [];
    watchConnects(events);
    const f = guarded(stubResolver({}, events));
    expect(await rejection(f(redirect(302, 'http://169.254.169.254/latest/meta-data/')))).toMatchObject({
      code: 'invalid_request',
      message: 'Refused to connect to 169.254.169.254: cloud metadata address; allow it with --allow-host 169.254.169.254:80',
    });
    expect(events).toEqual([`connect:127.0.0.1:${port}`]);
  });

  it('answers the redirect itself with redirect: manual, and fails with redirect: error', async () => {
    watchConnects([]);
    const f = guarded(stubResolver({}, []));
    const manual = await f(redirect(307, 'http://169.254.169.254/'), { redirect: 'manual' });
    expect(manual.status).toBe(307);
    expect(manual.headers.get('location')).toBe('http://169.254.169.254/');
    expect(await rejection(f(redirect(307, `http://127.0.0.1:${port}/x`), { redirect: 'error' }))).toBeInstanceOf(TypeError);
  });

  it('turns POST into GET on 303 and drops credentials on another origin', async () => {
    watchConnects([]);
    const f = guarded(stubResolver({ 'other.test': loopback }, []));
    const response = await f(redirect(303, `http://other.test:${port}/after`), {
      method: 'POST',
      body: 'payload',
      headers: { authorization: 'Bearer secret', 'content-type': 'text/plain', 'x-keep': 'yes' },
    });
    expect(await response.text()).toBe('hello from /after');
    const [first, second] = seen;
    expect(first).toMatchObject({ method: 'POST', body: 'payload' });
    expect(first?.headers.authorization).toBe('Bearer secret');
    expect(second).toMatchObject({ method: 'GET', path: '/after', body: '' });
    expect(second?.headers.authorization).toBeUndefined();
    expect(second?.headers['content-type']).toBeUndefined();
    expect(second?.headers['x-keep']).toBe('yes');
  });

  it('keeps method and body on 307', async () => {
    watchConnects([]);
    const f = guarded(stubResolver({}, []));
    await (await f(redirect(307, `http://127.0.0.1:${port}/again`), { method: 'PUT', body: 'same' })).text();
    expect(seen.map((s) => [s.method, s.body])).toEqual([
      ['PUT', 'same'],
      ['PUT', 'same'],
    ]);
  });
});
