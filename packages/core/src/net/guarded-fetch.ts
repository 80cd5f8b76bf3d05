import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { PlatformError } from '../errors.js';
import { formatIp, type OutboundPolicy, parseIp, refusalError } from './policy.js';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to all its addresses (default: `dns.lookup(host, { all: true })`, the system resolver). */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface GuardedFetchOptions {
  /** How host names are resolved. Tests inject a stub; the default is the system resolver. */
  readonly lookup?: HostResolver;
  /** Redirects followed (each hop is checked like the first request). Default 20, as fetch. */
  readonly maxRedirects?: number;
  /** Connection pools kept, one per set of checked addresses (least recently used closed first). Default 32. */
  readonly maxPools?: number;
}

/** Where a URL's connection would go, after the policy allowed every address. */
export interface CheckedTarget {
  readonly url: URL;
  /** The URL's host name, without IPv6 brackets. */
  readonly host: string;
  readonly addresses: readonly ResolvedAddress[];
}

/**
 * A `fetch` that only connects where the outbound policy allows. Before any connection it
 * resolves the URL's host, checks every address, and then connects only to those checked
 * addresses (the socket's own lookup answers them, so a second DNS answer, as in DNS
 * rebinding, is never used). Redirects are followed hop by hop, each checked the same way.
 * A refusal rejects with `PlatformError('invalid_request')` naming the host, the address and
 * the reason; network failures reject like fetch (`TypeError('fetch failed')` with a cause).
 */
export interface GuardedFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  readonly policy: OutboundPolicy;
  /** Resolves and checks a URL as a request would, without connecting. Throws the refusal. */
  check(url: string | URL): Promise<CheckedTarget>;
  /** Closes the pooled connections. The function still works after (new pools are opened). */
  close(): Promise<void>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const EVICTED_POOL_CLOSE_MS = 60_000;
/** Headers a redirect to another origin must not carry (as fetch does). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

const systemResolver: HostResolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A socket `lookup` that answers only the pre-checked addresses, whatever the name. */
function pinnedLookup(addresses: readonly ResolvedAddress[]) {
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

function isStream(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof (body as { getReader?: unknown }).getReader === 'function';
}

interface Outgoing {
  url: URL;
  method: string;
  headers: Headers;
  body: unknown;
  redirect: NonNullable<RequestInit['redirect']>;
  signal: AbortSignal | undefined;
  rest: Record<string, unknown>;
}

/** The request parts of `fetch(input, init)`, `init` winning over a `Request` input. */
function outgoing(input: string | URL | Request, init: RequestInit): Outgoing {
  const request = typeof input === 'string' || input instanceof URL ? undefined : input;
  const href = request ? request.url : String(input);
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw PlatformError.invalid(`Invalid URL: ${href}`);
  }
  const { method, headers, body, redirect, signal, ...rest } = init;
  return {
    url,
    method: (method ?? request?.method ?? 'GET').toUpperCase(),
    headers: new Headers(headers ?? request?.headers),
    body: body !== undefined ? body : (request?.body ?? undefined),
    redirect: redirect ?? request?.redirect ?? 'follow',
    signal: signal ?? request?.signal ?? undefined,
    rest: rest as Record<string, unknown>,
  };
}

/** A fetch that refuses what `policy` refuses, before connecting (see `GuardedFetch`). */
export function createGuardedFetch(policy: OutboundPolicy, options: GuardedFetchOptions = {}): GuardedFetch {
  const resolver = options.lookup ?? systemResolver;
  const maxRedirects = options.maxRedirects ?? 20;
  const maxPools = Math.max(1, options.maxPools ?? 32);
  const pools = new Map<string, Agent>();

  function pool(addresses: readonly ResolvedAddress[]): Agent {
    const key = addresses.map((a) => a.address).join(',');
    const existing = pools.get(key);
    if (existing) {
      pools.delete(key);
      pools.set(key, existing); // most recently used last
      return existing;
    }
    const agent = new Agent({ connect: { lookup: pinnedLookup(addresses) } });
    pools.set(key, agent);
    if (pools.size > maxPools) {
      const [oldestKey, oldest] = pools.entries().next().value as [string, Agent];
      pools.delete(oldestKey);
      // Later, so a request that just picked it still gets dispatched; close() then waits for requests in flight.
      setTimeout(() => void oldest.close().catch(() => undefined), EVICTED_POOL_CLOSE_MS).unref();
    }
    return agent;
  }

  async function check(target: string | URL): Promise<CheckedTarget> {
    let url: URL;
    try {
      url = new URL(String(target));
    } catch {
      throw PlatformError.invalid(`Invalid URL: ${String(target)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw PlatformError.invalid(`Refused to connect to ${url.href}: only http and https URLs are allowed`);
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const literal = parseIp(host);
    let addresses: readonly ResolvedAddress[];
    if (literal) {
      addresses = [{ address: formatIp(literal), family: literal.family }];
    } else {
      try {
        addresses = await resolver(host);
      } catch (error) {
        throw new TypeError('fetch failed', { cause: error });
      }
      if (addresses.length === 0) {
        throw new TypeError('fetch failed', { cause: Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' }) });
      }
    }
    for (const { address } of addresses) {
      const decision = policy.check(host, address);
      if (!decision.allowed) throw refusalError(host, address, decision.reason);
    }
    return { url, host, addresses };
  }

  const guarded = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const req = outgoing(input, init);
    let { url, method, body } = req;
    const { headers, redirect, signal } = req;
    for (let hop = 0; ; hop++) {
      signal?.throwIfAborted();
      const target = await check(url);
      signal?.throwIfAborted();
      const requestInit = {
        ...req.rest,
        method,
        headers: [...headers],
        body: body as UndiciRequestInit['body'],
        redirect: 'manual',
        dispatcher: pool(target.addresses),
        ...(signal ? { signal } : {}),
        ...(isStream(body) ? { duplex: 'half' } : {}),
      } as UndiciRequestInit;
      const response = await undiciFetch(url, requestInit);
      const location = response.headers.get('location');
      if (redirect === 'manual' || !REDIRECT_STATUSES.has(response.status) || location === null) {
        return response as unknown as Response;
      }
      await response.body?.cancel().catch(() => undefined);
      if (redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`unexpected redirect to ${location}`) });
      if (hop >= maxRedirects) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new TypeError('fetch failed', { cause: new Error(`invalid redirect location ${location}`) });
      }
      const status = response.status;
      if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        for (const name of BODY_HEADERS) headers.delete(name);
      } else if (isStream(body)) {
        throw new TypeError('fetch failed', { cause: new Error('cannot follow a redirect with a streamed request body') });
      }
      if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      url = next;
    }
  };

  return Object.assign(guarded, {
    policy,
    check,
    async close(): Promise<void> {
      const agents = [...pools.values()];
      pools.clear();
      await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
    },
  });
}
