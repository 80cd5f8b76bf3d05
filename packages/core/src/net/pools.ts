import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, type Dispatcher, ProxyAgent } from 'undici';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A socket `lookup` that answers only the pre-checked addresses, whatever the name: the socket
 * connects where the policy looked, so a second DNS answer (DNS rebinding) is never used.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]) {
  return (_hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    const usable = wanted === 0 ? addresses : addresses.filter((a) => a.family === wanted);
    const first = usable[0];
    if (!first) {
      const error: NodeJS.ErrnoException = new Error(`No checked IPv${wanted} address`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
    } else if (options.all) {
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    } else {
      callback(null, first.address, first.family);
    }
  };
}

const EVICTED_POOL_CLOSE_MS = 60_000;

/**
 * Connection pools of the guarded fetch, one per set of checked addresses (direct) or per proxy
 * and its checked addresses, the least recently used closed first beyond `max`. Shared by every
 * policy made from one guarded fetch (`withPolicy`, `viaProxy`): a pool only ever connects to
 * the addresses of its key, which were checked before it was chosen.
 */
export class Pools {
  readonly #max: number;
  readonly #agents = new Map<string, Dispatcher>();

  constructor(max: number) {
    this.#max = Math.max(1, max);
  }

  /** The pool whose sockets connect only to `addresses`. */
  direct(addresses: readonly ResolvedAddress[]): Dispatcher {
    return this.#get(`direct ${key(addresses)}`, () => new Agent({ connect: { lookup: pinnedLookup(addresses) } }));
  }

  /** The pool that tunnels through the proxy at `proxyUrl`, whose own socket connects only to `addresses`. */
  proxy(proxyUrl: URL, addresses: readonly ResolvedAddress[]): Dispatcher {
    // `proxyTls` are the options of the connection to the proxy (TLS or not): its lookup is pinned.
    return this.#get(`proxy ${proxyUrl.href} ${key(addresses)}`, () => new ProxyAgent({ uri: proxyUrl.href, proxyTls: { lookup: pinnedLookup(addresses) } as never }));
  }

  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  }

  #get(name: string, make: () => Dispatcher): Dispatcher {
    const existing = this.#agents.get(name);
    if (existing) {
      this.#agents.delete(name);
      this.#agents.set(name, existing); // most recently used last
      return existing;
    }
    const agent = make();
    this.#agents.set(name, agent);
    if (this.#agents.size > this.#max) {
      const [oldestName, oldest] = this.#agents.entries().next().value as [string, Dispatcher];
      this.#agents.delete(oldestName);
      // Later, so a request that just picked it still gets dispatched; close() then waits for requests in flight.
      setTimeout(() => void oldest.close().catch(() => undefined), EVICTED_POOL_CLOSE_MS).unref();
    }
    return agent;
  }
}

const key = (addresses: readonly ResolvedAddress[]) => addresses.map((a) => a.address).join(',');
