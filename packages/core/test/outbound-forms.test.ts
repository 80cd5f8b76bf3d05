import dns from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch as undiciFetch } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isPlatformError } from '../src/errors.js';
import { createGuardedFetch, type GuardedFetch, type HostResolver } from '../src/net/guarded-fetch.js';
import { createOutboundPolicy } from '../src/net/policy.js';
import { METADATA_TRAP, PRIVATE_TRAP, startTrap, type Trap, trapsAvailable } from './traps.js';

/**
 * The guarded fetch against every URL form fetch accepts, with real listeners ("traps") on the
 * refused addresses 10.0.0.1 and 169.254.169.254 inside the loopback-only namespace. For each
 * form a plain fetch first shows that the form really reaches the trap (so the case means
 * something); then the guarded fetch must refuse it with no connection at the trap.
 */

const FORMS = (p: number): readonly string[] => [
  // Leading and trailing spaces and C0 controls: the URL parser strips them.
  ` http://10.0.0.1:${p}/`,
  `http://10.0.0.1:${p}/ `,
  `\u0000http://10.0.0.1:${p}/`,
  `\u001fhttp://10.0.0.1:${p}/\u0001`,
  // Tab, newline and carriage return anywhere: removed.
  `h\tttp://10.0.0.1:${p}/`,
  `ht\ntp://10.0.0.1:${p}/`,
  `http://10.0\t.0.1:${p}/`,
  `http://10.0.0\n.1:${p}/`,
  `http://1\r0.0.0.1:${p}/`,
  // Scheme case, backslashes, missing or extra slashes.
  `HTTP://10.0.0.1:${p}/`,
  `HtTp://10.0.0.1:${p}/`,
  `http:\\\\10.0.0.1:${p}\\x`,
  `http:10.0.0.1:${p}/`,
  `http:/10.0.0.1:${p}/`,
  `http:///10.0.0.1:${p}/`,
  // IPv4 as one number, octal, hex, and short forms.
  `http://167772161:${p}/`,
  `http://012.0.0.01:${p}/`,
  `http://0x0a000001:${p}/`,
  `http://0xa.0.0.1:${p}/`,
  `http://10.1:${p}/`,
  `http://10.0.1:${p}/`,
  `http://0xa.1:${p}/`,
  `http://012.1:${p}/`,
  // IPv4-mapped IPv6.
  `http://[::ffff:10.0.0.1]:${p}/`,
  `http://[::ffff:a00:1]:${p}/`,
  `http://[0:0:0:0:0:ffff:10.0.0.1]:${p}/`,
  `http://[::FFFF:0A00:0001]:${p}/`,
  // Trailing dot, percent-encoding, full-width digits (mapped by IDNA).
  `http://10.0.0.1.:${p}/`,
  `http://%31%30.0.0.1:${p}/`,
  `http://10%2E0%2E0%2E1:${p}/`,
  `http://\uff11\uff10.\uff10.\uff10.\uff11:${p}/`,
  // The metadata address in other spellings.
  `ht\ntp://169.254.169.254:${p}/`,
  `http://2852039166:${p}/`,
  `http://0xa9fea9fe:${p}/`,
  `http://169.254.43518:${p}/`,
  `http://0251.0376.0251.0376:${p}/`,
  `http://[::ffff:169.254.169.254]:${p}/`,
];

/** Forms fetch itself refuses (credentials in the URL): the guard must refuse them first, by address. */
const CREDENTIAL_FORMS = (p: number): readonly string[] => [`http://user:pass@10.0.0.1:${p}/`, `http://127.0.0.1:80@10.0.0.1:${p}/`];

/** IPv6 forms that carry 10.0.0.1 but route elsewhere (nothing listens there): refused by what they embed. */
const UNROUTED_FORMS = (p: number): readonly string[] => [`http://[::10.0.0.1]:${p}/`, `http://[64:ff9b::a00:1]:${p}/`, `http://[2002:a00:1::1]:${p}/`];

const fetches: GuardedFetch[] = [];
const guarded = (lookup?: HostResolver): GuardedFetch => {
  // 127.0.0.1 (the test's own servers) allowed, as `--allow-host 127.0.0.1` does; the traps stay refused.
  const f = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }), lookup ? { lookup } : {});
  fetches.push(f);
  return f;
};
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(fetches.splice(0).map((f) => f.close()));
});

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (response) => {
      throw new Error(`expected a refusal, got HTTP ${(response as Response).status}`);
    },
    (error: unknown) => error,
  );
}

describe.skipIf(!trapsAvailable)('guarded fetch: every URL form fetch accepts (traps on 10.0.0.1 and 169.254.169.254)', () => {
  let privateTrap: Trap;
  let metadataTrap: Trap;
  beforeAll(async () => {
    privateTrap = await startTrap(PRIVATE_TRAP);
    metadataTrap = await startTrap(METADATA_TRAP, privateTrap.port);
  });
  afterAll(async () => {
    await privateTrap.close();
    await metadataTrap.close();
  });
  const trapped = () => privateTrap.connections + metadataTrap.connections;

  it('each form reaches a trap with a plain fetch, and is refused by the guarded fetch before any connection', async () => {
    const f = guarded();
    for (const url of FORMS(privateTrap.port)) {
      const before = trapped();
      const plain = await undiciFetch(url);
      expect(await plain.text(), JSON.stringify(url)).toBe('trapped');
      expect(trapped() - before, `plain fetch of ${JSON.stringify(url)}`).toBe(1);

      const error = await refusal(f(url));
      expect(isPlatformError(error), `${JSON.stringify(url)}: ${String(error)}`).toBe(true);
      expect(error, JSON.stringify(url)).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Refused to connect to .*(private|cloud metadata) address/) });
      expect(trapped() - before, `guarded fetch of ${JSON.stringify(url)}`).toBe(1);
      // check() (used before non-HTTP connections) parses the same way.
      await expect(f.check(url), JSON.stringify(url)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('refuses credential and unrouted IPv6 forms by the address they name', async () => {
    const f = guarded();
    const before = trapped();
    for (const url of [...CREDENTIAL_FORMS(privateTrap.port), ...UNROUTED_FORMS(privateTrap.port)]) {
      expect(await refusal(f(url)), url).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Refused to connect to /) });
    }
    expect(trapped()).toBe(before);
  });

  it('refuses a Request object whose URL is one of these forms (the Request parsed it already)', async () => {
    const f = guarded();
    const before = trapped();
    for (const url of FORMS(privateTrap.port).slice(0, 8)) {
      expect(await refusal(f(new Request(url, { method: 'POST', body: '{}' }))), JSON.stringify(url)).toMatchObject({ code: 'invalid_request' });
    }
    expect(trapped()).toBe(before);
  });
});

describe.skipIf(!trapsAvailable)('guarded fetch: redirects and DNS rebinding, against a counting trap', () => {
  let trap: Trap;
  let server: Server;
  let port: number;
  let served = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      served++;
      const to = /^\/redirect\?to=(.+)$/.exec(req.url ?? '')?.[1];
      if (to) res.writeHead(307, { location: decodeURIComponent(to) }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('loopback');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    // The trap listens on the same port as the loopback server, so a host name that rebinds
    // from 127.0.0.1 to 10.0.0.1 lands on it.
    trap = await startTrap(PRIVATE_TRAP, port);
  });
  afterAll(async () => {
    await trap.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a loopback 307 to a refused address is refused; the trap sees no connection (a plain fetch follows it there)', async () => {
    for (const target of [`http://10.0.0.1:${port}/inside`, ` http://0x0a000001:${port}/inside`, `http://[::ffff:10.0.0.1]:${port}/inside`]) {
      const start = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(target)}`;
      const before = trap.connections;
      expect(await (await undiciFetch(start)).text()).toBe('trapped');
      expect(trap.connections - before).toBe(1);

      const error = await refusal(guarded()(start, { method: 'POST', body: 'secret' }));
      expect(error, target).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Refused to connect to .*private address/) });
      expect(trap.connections - before, target).toBe(1);
    }
  });

  it('DNS rebinding: the connection goes to the address that was checked, never to a later answer', async () => {
    // The name answers 127.0.0.1 once, then 10.0.0.1 to every later lookup, the system
    // resolver's included (a socket that looked the name up again would land on the trap).
    let answers = 0;
    const rebinding = (): string => (answers++ === 0 ? '127.0.0.1' : PRIVATE_TRAP);
    const realLookup = dns.lookup;
    vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: unknown, callback: unknown) => {
      if (hostname !== 'rebind.test') return (realLookup as (...args: unknown[]) => void)(hostname, options, callback);
      const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
      const address = rebinding();
      const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
      process.nextTick(() => (all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
    }) as typeof dns.lookup);
    const resolver: HostResolver = async () => [{ address: rebinding(), family: 4 }];

    // Control: without the pinned lookup, the socket's own lookup gets the rebound answer.
    answers = 1;
    const before = trap.connections;
    expect(await (await undiciFetch(`http://rebind.test:${port}/`)).text()).toBe('trapped');
    expect(trap.connections - before).toBe(1);

    // Guarded: resolved once (127.0.0.1, checked), and the socket connects to that address.
    answers = 0;
    const servedBefore = served;
    const f = guarded(resolver);
    expect(await (await f(`http://rebind.test:${port}/`)).text()).toBe('loopback');
    expect(served - servedBefore).toBe(1);
    expect(answers).toBeGreaterThanOrEqual(1);
    expect(trap.connections - before).toBe(1);

    // The next request resolves again, gets 10.0.0.1, and is refused before connecting.
    expect(await refusal(f(`http://rebind.test:${port}/`))).toMatchObject({
      code: 'invalid_request',
      message: `Refused to connect to rebind.test (10.0.0.1): private address; allow it with --allow-host rebind.test:${port}`,
    });
    expect(trap.connections - before).toBe(1);
  });
});
