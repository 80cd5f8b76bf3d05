import dns from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGuardedFetch, type GuardedFetch, type HostResolver } from '../src/net/guarded-fetch.js';
import { createOutboundPolicy } from '../src/net/policy.js';
import { type ForwardProxy, startForwardProxy } from './forward-proxy.js';
import { PRIVATE_TRAP, startTrap, type Trap, trapsAvailable } from './traps.js';

/**
 * `withPolicy` (the operator's own URLs: the same fetch, the operator's hosts allowed) and
 * `viaProxy` (requests through the operator's proxy: every target checked first, the connection
 * to the proxy pinned to its checked address). Loopback servers, a counting forward proxy, and
 * a trap on 10.0.0.1 inside the loopback-only namespace.
 */

let server: Server;
let port: number;
const seen: string[] = [];
let proxy: ForwardProxy;
let trap: Trap | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString('utf8')}`.trim());
      const to = /^\/redirect\?to=(.+)$/.exec(req.url ?? '')?.[1];
      if (to) res.writeHead(307, { location: decodeURIComponent(to) }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  proxy = await startForwardProxy();
  // The trap shares the server's port: a target or proxy name that rebinds to 10.0.0.1 lands on it.
  if (trapsAvailable) trap = await startTrap(PRIVATE_TRAP, port);
});
afterAll(async () => {
  await trap?.close();
  await proxy.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const fetches: GuardedFetch[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  seen.length = 0;
  proxy.carried.length = 0;
  await Promise.all(fetches.splice(0).map((f) => f.close()));
});

/** A guarded fetch; by default 127.0.0.1 (the test servers and the proxy) is allowed, as `--allow-host 127.0.0.1` does. */
const guarded = (allowedHosts: string[] = ['127.0.0.1'], lookup?: HostResolver): GuardedFetch => {
  const f = createGuardedFetch(createOutboundPolicy({ allowedHosts }), lookup ? { lookup } : {});
  fetches.push(f);
  return f;
};

describe('withPolicy', () => {
  it("decides by the other policy and leaves the first one's as it was", async () => {
    const callers = guarded([], async () => [{ address: '10.9.9.9', family: 4 }]);
    const operator = callers.withPolicy(createOutboundPolicy({ allowedHosts: ['models.internal'] }));
    expect(operator.policy.allowedHosts).toEqual(['models.internal']);
    await expect(callers.check('http://models.internal/v1')).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('private address') });
    await expect(operator.check('http://models.internal/v1')).resolves.toMatchObject({ host: 'models.internal', addresses: [{ address: '10.9.9.9' }] });
    await expect(operator.check('http://10.9.9.9/')).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('fetches, and close() of the first closes the pools of both', async () => {
    const callers = guarded();
    const operator = callers.withPolicy(createOutboundPolicy({ allowedHosts: ['127.0.0.1'], allowlistOnly: true }));
    expect(await (await operator(`http://127.0.0.1:${port}/op`)).text()).toBe('hello from /op');
    await callers.close();
    expect(await (await operator(`http://127.0.0.1:${port}/again`)).text()).toBe('hello from /again');
  });
});

describe('redirect of a Request with a body', () => {
  it('a 307 sends the body of a Request again, to the next checked hop', async () => {
    const f = guarded();
    const start = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${port}/landed`)}`;
    const response = await f(new Request(start, { method: 'POST', body: '{"q":1}', headers: { 'content-type': 'application/json' } }));
    expect(await response.text()).toBe('hello from /landed');
    expect(seen).toEqual([expect.stringMatching(/^POST \/redirect.* \{"q":1\}$/), 'POST /landed {"q":1}']);
  });
});

describe('viaProxy', () => {
  const route = () => ({ http: proxy.url, https: proxy.url });

  it('sends an allowed target through the proxy', async () => {
    const f = guarded().viaProxy(route());
    expect(await (await f(`http://127.0.0.1:${port}/through`)).text()).toBe('hello from /through');
    expect(proxy.carried).toEqual([`CONNECT 127.0.0.1:${port}`]);
    expect(seen).toEqual(['GET /through']);
  });

  it('refuses a refused target (in any spelling) before the proxy hears of it', async () => {
    const f = guarded().viaProxy(route());
    const before = { proxy: proxy.connections, trap: trap?.connections };
    for (const url of [`http://10.0.0.1:${port}/`, ` http://0x0a000001:${port}/`, `h\tttp://[::ffff:10.0.0.1]:${port}/`, 'http://169.254.169.254/']) {
      await expect(f(url), JSON.stringify(url)).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Refused to connect to /) });
    }
    expect(proxy.connections).toBe(before.proxy);
    expect(proxy.carried).toEqual([]);
    expect(trap?.connections).toBe(before.trap);
  });

  it('checks every redirect hop before handing it to the proxy', async () => {
    const f = guarded().viaProxy(route());
    const before = trap?.connections;
    const start = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(`http://10.0.0.1:${port}/inside`)}`;
    await expect(f(start)).rejects.toMatchObject({ code: 'invalid_request', message: `Refused to connect to 10.0.0.1: private address; allow it with --allow-host 10.0.0.1:${port}` });
    expect(proxy.carried).toEqual([`CONNECT 127.0.0.1:${port}`]);
    expect(trap?.connections).toBe(before);
  });

  it("checks the proxy's own address with the route's guard (the operator's policy)", async () => {
    const callers = guarded();
    const strictOperator = callers.withPolicy(createOutboundPolicy({ allowedHosts: ['192.0.2.1'], allowlistOnly: true }));
    const f = callers.viaProxy({ ...route(), guard: strictOperator });
    await expect(f(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({
      code: 'invalid_request',
      message: `Refused to connect to 127.0.0.1: not in the allowed hosts (--allowed-hosts-only); allow it with --allow-host 127.0.0.1:${proxy.port}`,
    });
    expect(proxy.carried).toEqual([]);
  });

  it.skipIf(!trapsAvailable)('connects to the address the proxy name was checked at, whatever it resolves to later', async () => {
    // proxy.test answers 127.0.0.1 to the check; any later lookup (the socket's own) would get 10.0.0.1.
    const trapProxy = await startTrap(PRIVATE_TRAP, proxy.port);
    try {
      vi.spyOn(dns, 'lookup').mockImplementation(((_host: string, options: unknown, callback: unknown) => {
        const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
        const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
        process.nextTick(() => (all ? done(null, [{ address: PRIVATE_TRAP, family: 4 }]) : done(null, PRIVATE_TRAP, 4)));
      }) as typeof dns.lookup);
      const callers = guarded(['127.0.0.1'], async (host) => (host === 'proxy.test' ? [{ address: '127.0.0.1', family: 4 }] : []));
      const f = callers.viaProxy({ http: `http://proxy.test:${proxy.port}`, https: `http://proxy.test:${proxy.port}` });
      expect(await (await f(`http://127.0.0.1:${port}/pinned`, { signal: AbortSignal.timeout(5000) })).text()).toBe('hello from /pinned');
      expect(proxy.carried).toEqual([`CONNECT 127.0.0.1:${port}`]);
      expect(trapProxy.connections).toBe(0);
    } finally {
      await trapProxy.close();
    }
  });
});
