import net from 'node:net';
import tls from 'node:tls';
import { vi } from 'vitest';

/**
 * Test guards around the sockets undici opens (it calls `net.connect` / `tls.connect`), so a
 * test of the outbound policy never sends traffic off the machine, even when the code under
 * test is broken. Undo them with `vi.restoreAllMocks()`.
 */

const isLoopback = (address: string) => /^127\./.test(address) || address === '::1' || address === '::ffff:127.0.0.1';

type Callback = (error: unknown, address: unknown, family?: unknown) => void;

function forbid(what: string, events: string[]) {
  return ((options: unknown) => {
    events.push(`${what}:${JSON.stringify(options)}`);
    throw new Error(`test: ${what} must not be called`);
  }) as never;
}

/**
 * Records each `net.connect` as `connect:<host>:<port>` in `events` and lets through only
 * connections that end at a loopback address: an IP literal must be loopback, and a host name
 * must come with a socket `lookup` (the guard's pinned one) answering loopback only. Anything
 * else, and any TLS connection, throws before a socket exists.
 */
export function watchConnects(events: string[]): void {
  const realConnect = net.connect;
  vi.spyOn(net, 'connect').mockImplementation(((...args: Parameters<typeof net.connect>) => {
    const options = args[0] as unknown as net.NetConnectOpts & { host?: string; port?: number };
    events.push(`connect:${options.host}:${options.port}`);
    const host = options.host ?? '';
    if (net.isIP(host) !== 0) {
      if (!isLoopback(host)) throw new Error(`test: refusing to connect to ${host}`);
      return realConnect(options);
    }
    const lookup = (options as { lookup?: (hostname: unknown, options: unknown, callback: Callback) => void }).lookup;
    if (typeof lookup !== 'function') throw new Error(`test: ${host} would be resolved by the system resolver`);
    const checked = (hostname: unknown, lookupOptions: unknown, callback: Callback) =>
      lookup(hostname, lookupOptions, (error, address, family) => {
        const all = Array.isArray(address) ? (address as { address: string }[]).map((a) => a.address) : [String(address)];
        if (!error && !all.every(isLoopback)) return callback(new Error(`test: ${host} resolved to ${all.join(', ')}`), '', 0);
        callback(error, address, family);
      });
    return realConnect({ ...options, lookup: checked as net.LookupFunction });
  }) as typeof net.connect);
  vi.spyOn(net, 'createConnection').mockImplementation(forbid('createConnection', events));
  vi.spyOn(tls, 'connect').mockImplementation(forbid('tls.connect', events));
}

/** Makes every connection attempt throw (recorded in `events`) without opening a socket. */
export function forbidConnects(events: string[]): void {
  vi.spyOn(net, 'connect').mockImplementation(forbid('connect', events));
  vi.spyOn(net, 'createConnection').mockImplementation(forbid('createConnection', events));
  vi.spyOn(tls, 'connect').mockImplementation(forbid('tls.connect', events));
}
