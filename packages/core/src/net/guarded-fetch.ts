import { lookup as dnsLookup } from 'node:dns/promises';
import type { Dispatcher } from 'undici';
import { PlatformError } from '../errors.js';
import { createOutboundPolicy, formatIp, hostPortEntry, type OutboundPolicy, parseIp, portOf, refusalError } from './policy.js';
import { Pools, type ResolvedAddress } from './pools.js';
import { dnsFailureCode, unresolvedHostError } from './unresolved-host.js';

export type { ResolvedAddress } from './pools.js';

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
  /** The URL as fetch parses it (the WHATWG URL parser): what is checked is what is connected to. */
  readonly url: URL;
  /** The URL's host name, without IPv6 brackets. */
  readonly host: string;
  readonly addresses: readonly ResolvedAddress[];
}

/** An HTTP(S) proxy the requests of a guarded fetch go through (`GuardedFetch#viaProxy`). */
export interface ProxyRoute {
  /** The proxy of `http:` targets, e.g. `http://proxy.internal:3128`. */
  readonly http: string;
  /** The proxy of `https:` targets (CONNECT tunnels). */
  readonly https: string;
  /**
   * Checks the proxy's own address before the connection to it (which is then pinned to the
   * checked addresses): the operator's policy, as the proxy is the operator's. Default: the
   * fetch `viaProxy` is called on.
   */
  readonly guard?: Pick<GuardedFetch, 'check'>;
}

/**
 * A `fetch` that only connects where the outbound policy allows. It parses the URL as fetch
 * does (`new URL()`: spaces and C0 controls around it and tabs and newlines inside it removed,
 * any IPv4 spelling read as the address it is) and hands fetch that parsed URL. Before any
 * connection it resolves the URL's host, checks every address, and then connects only to those
 * checked addresses (the socket's own lookup answers them, so a second DNS answer, as in DNS
 * rebinding, is never used). Redirects are followed hop by hop, each checked the same way.
 * A refusal rejects with `PlatformError('invalid_request')` naming the host, the address and
 * the reason; a host name that does not resolve (ENOTFOUND, EAI_AGAIN, no address) rejects with
 * `PlatformError('unavailable')`, "host name 'x' does not resolve" (`unresolvedHostError`);
 * other network failures reject like fetch (`TypeError('fetch failed')` with a cause).
 */
export interface GuardedFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  readonly policy: OutboundPolicy;
  /** Resolves and checks a URL as a request would, without connecting. Throws the refusal. */
  check(url: string | URL): Promise<CheckedTarget>;
  /**
   * The same fetch (resolver, connection pools, `close`) deciding by another policy: the
   * operator's own URLs use one that also allows the operator's hosts.
   */
  withPolicy(policy: OutboundPolicy): GuardedFetch;
  /**
   * This fetch sending every request through an HTTP(S) proxy: each target (and each redirect
   * hop) is checked by this fetch's policy before the request is handed to the proxy, and the
   * connection to the proxy goes only to the proxy's checked addresses (see `ProxyRoute.guard`).
   * The proxy resolves the target's name itself: what it does with it is the proxy's policy.
   */
  viaProxy(route: ProxyRoute): GuardedFetch;
  /** Closes the pooled connections (of every fetch made from this one). The function still works after (new pools are opened). */
  close(): Promise<void>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers a redirect to another origin must not carry (as fetch does). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/**
 * Node's own fetch, as it was when this module loaded: its `Response` is the global one (clients
 * such as transformers.js test answers with `instanceof Response`), and it takes undici's
 * `dispatcher` (our pinned pools). Taken at load, so a replacement of the global fetch
 * installed later (one that would come back here) is never called.
 */
const nativeFetch = globalThis.fetch.bind(globalThis) as (input: URL, init: Record<string, unknown>) => Promise<Response>;

const systemResolver: HostResolver = async (hostname) => (await dnsLookup(hostname, { all: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

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

/**
 * The request parts of `fetch(input, init)`, `init` winning over a `Request` input. A
 * `Request`'s body is read into memory (API clients send small JSON bodies this way), so a
 * 307/308 redirect can send it again to the next, checked, hop.
 */
async function outgoing(input: string | URL | Request, init: RequestInit): Promise<Outgoing> {
  const request = typeof input === 'string' || input instanceof URL ? undefined : input;
  const href = request ? request.url : String(input);
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw PlatformError.invalid(`Invalid URL: ${href}`);
  }
  const { method, headers, body, redirect, signal, ...rest } = init;
  const requestBody = body === undefined && request?.body ? await request.arrayBuffer() : undefined;
  return {
    url,
    method: (method ?? request?.method ?? 'GET').toUpperCase(),
    headers: new Headers(headers ?? request?.headers),
    body: body !== undefined ? body : requestBody,
    redirect: redirect ?? request?.redirect ?? 'follow',
    signal: signal ?? request?.signal ?? undefined,
    rest: rest as Record<string, unknown>,
  };
}

/** What fetches made from one `createGuardedFetch` share: the resolver, the pools and the redirect limit. */
interface Shared {
  readonly resolver: HostResolver;
  readonly maxRedirects: number;
  readonly pools: Pools;
}

/** A fetch that refuses what `policy` refuses, before connecting (see `GuardedFetch`). */
export function createGuardedFetch(policy: OutboundPolicy, options: GuardedFetchOptions = {}): GuardedFetch {
  return make(policy, undefined, {
    resolver: options.lookup ?? systemResolver,
    maxRedirects: options.maxRedirects ?? 20,
    pools: new Pools(options.maxPools ?? 32),
  });
}

function make(policy: OutboundPolicy, route: ProxyRoute | undefined, shared: Shared): GuardedFetch {
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
        addresses = await shared.resolver(host);
      } catch (error) {
        // A name without an address is told apart from other network failures, so that every
        // caller can say "does not resolve" rather than "not running" or "unreachable".
        const dns = dnsFailureCode(error);
        if (dns) throw unresolvedHostError(host, dns, error);
        throw new TypeError('fetch failed', { cause: error });
      }
      if (addresses.length === 0) throw unresolvedHostError(host, 'ENOTFOUND');
    }
    const port = portOf(url);
    for (const { address } of addresses) {
      const decision = policy.check(host, address, port);
      if (!decision.allowed) throw refusalError(host, address, decision.reason, port);
    }
    return { url, host, addresses };
  }

  /** The pool a checked target's request goes through: pinned to its addresses, or to the proxy's. */
  async function dispatcher(target: CheckedTarget): Promise<Dispatcher> {
    if (!route) return shared.pools.direct(target.addresses);
    const proxy = await (route.guard ?? guarded).check(target.url.protocol === 'https:' ? route.https : route.http);
    return shared.pools.proxy(proxy.url, proxy.addresses);
  }

  const guarded = Object.assign(
    async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
      const req = await outgoing(input, init);
      let { url, method, body } = req;
      const { headers, redirect, signal } = req;
      for (let hop = 0; ; hop++) {
        signal?.throwIfAborted();
        const target = await check(url);
        const via = await dispatcher(target);
        signal?.throwIfAborted();
        const response = await nativeFetch(url, {
          ...req.rest,
          method,
          headers: [...headers],
          body,
          redirect: 'manual',
          dispatcher: via,
          ...(signal ? { signal } : {}),
          ...(isStream(body) ? { duplex: 'half' } : {}),
        });
        const location = response.headers.get('location');
        if (redirect === 'manual' || !REDIRECT_STATUSES.has(response.status) || location === null) {
          return response;
        }
        await response.body?.cancel().catch(() => undefined);
        if (redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`unexpected redirect to ${location}`) });
        if (hop >= shared.maxRedirects) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
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
          // Refuse a hop the policy refuses as such, before saying the body cannot be sent again.
          await check(next);
          throw new TypeError('fetch failed', { cause: new Error('cannot follow a redirect with a streamed request body') });
        }
        if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
        url = next;
      }
    },
    {
      policy,
      check,
      withPolicy: (other: OutboundPolicy) => make(other, route, shared),
      viaProxy: (next: ProxyRoute) => make(policy, next, shared),
      close: () => shared.pools.close(),
    },
  );
  return guarded;
}

/**
 * The same fetch (resolver, pools) deciding by its policy with exactly the host and port of each
 * of `urls` allowed as well: for addresses the operator configured (a default local model
 * runtime), reached for callers without opening the rest of that host to them.
 */
export function allowingUrls(fetch: GuardedFetch, urls: readonly string[]): GuardedFetch {
  const entries = urls.map(hostPortEntry).filter((entry): entry is string => entry !== undefined);
  return fetch.withPolicy(createOutboundPolicy({ allowlistOnly: fetch.policy.allowlistOnly, allowedHosts: [...fetch.policy.allowedHosts, ...entries] }));
}
