import { isIPv4, isIPv6 } from 'node:net';
import { PlatformError } from '../errors.js';

/**
 * The outbound URL policy (DESIGN.md, "Outbound URLs supplied by API callers"): for a host and
 * one of its resolved addresses, may the service open a connection there? Pure: no DNS, no
 * sockets. `createGuardedFetch` applies it to every connection the service makes for a caller.
 */

/** What an address is, by the IANA special-purpose registries. */
export type AddressKind =
  | 'loopback'
  | 'public'
  | 'private'
  | 'link-local'
  /** 100.64.0.0/10, carrier-grade NAT (RFC 6598). */
  | 'shared'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'documentation'
  | 'reserved';

/** An IP address as a number: 32 bits for IPv4, 128 bits for IPv6. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
}

export interface AddressClass {
  readonly kind: AddressKind;
  /** Set for addresses that embed an IPv4 address (IPv4-mapped, NAT64, 6to4): the embedded one, dotted. */
  readonly embedded?: string;
  /** True for cloud metadata endpoints (169.254.169.254 and friends). */
  readonly metadata?: boolean;
}

export interface OutboundPolicyOptions {
  /**
   * What the operator allows besides public addresses (or, with `allowlistOnly`, the only things
   * reachable): host names (`ollama.internal`, `*.corp.example` for any subdomain), IP addresses
   * and CIDR ranges, IPv4 or IPv6 (`10.0.0.0/8`, `fd00::/8`). A host name or IP address may name
   * one port (`127.0.0.1:1234`, `[::1]:11434`, `models.internal:8080`): then only that port of it
   * is allowed; without a port every port is.
   */
  readonly allowedHosts?: readonly string[];
  /** Only allow-listed hosts and ranges are reachable; public addresses too are refused. */
  readonly allowlistOnly?: boolean;
}

export type PolicyDecision =
  | { readonly allowed: true; readonly kind: AddressKind | 'invalid'; readonly matched?: string }
  | { readonly allowed: false; readonly kind: AddressKind | 'invalid'; readonly reason: string };

export interface OutboundPolicy {
  readonly allowlistOnly: boolean;
  /** The allow-list entries as given (normalised: lower case, IPs and CIDRs in canonical form, IPv6 with a port in brackets). */
  readonly allowedHosts: readonly string[];
  /**
   * May `host` connect to `address` (one of the addresses `host` resolved to, or `host` itself
   * when it is an IP) on `port`? Without a port, only entries without one can allow it.
   */
  check(host: string, address: string, port?: number): PolicyDecision;
}

const V4_BITS = 32n;
const V6_BITS = 128n;
const V4_MAX = (1n << V4_BITS) - 1n;
const V6_MAX = (1n << V6_BITS) - 1n;

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function parseV4(text: string): bigint {
  let value = 0n;
  for (const part of text.split('.')) value = (value << 8n) | BigInt(Number(part));
  return value;
}

function parseV6(text: string): bigint {
  let head = text;
  let tailV4: bigint | undefined;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tailV4 = parseV4(text.slice(lastColon + 1));
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups = [...leftGroups, ...Array<string>(right === undefined ? 0 : missing).fill('0'), ...rightGroups];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  if (tailV4 !== undefined) value = (value & ~0xffffffffn) | tailV4;
  return value;
}

/** Parses an IPv4 or IPv6 address (brackets and an IPv6 zone id are accepted); undefined when it is not one. */
export function parseIp(text: string): IpAddress | undefined {
  const bare = stripBrackets(text.trim());
  const unzoned = bare.includes('%') ? bare.slice(0, bare.indexOf('%')) : bare;
  if (isIPv4(unzoned)) return { family: 4, value: parseV4(unzoned) };
  if (isIPv6(unzoned)) return { family: 6, value: parseV6(unzoned) };
  return undefined;
}

/** The dotted form of an IPv4 value. */
function formatV4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/** The canonical text of an address (IPv6 compressed per RFC 5952). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return formatV4(ip.value);
  const groups = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt((7 - i) * 16)) & 0xffffn));
  // The longest run (of two or more) of zero groups becomes `::`.
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`;
}

/** An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it is; others unchanged. */
function unmap(ip: IpAddress): IpAddress {
  if (ip.family === 6 && ip.value >> 32n === 0xffffn) return { family: 4, value: ip.value & V4_MAX };
  return ip;
}

interface Range {
  readonly family: 4 | 6;
  readonly network: bigint;
  readonly prefix: number;
}

function inRange(ip: IpAddress, range: Range): boolean {
  if (ip.family !== range.family) return false;
  const bits = ip.family === 4 ? V4_BITS : V6_BITS;
  const shift = bits - BigInt(range.prefix);
  return ip.value >> shift === range.network >> shift;
}

function range(cidr: string): Range {
  const [address = '', prefix = ''] = cidr.split('/');
  const ip = parseIp(address);
  if (!ip) throw new Error(`bad built-in range ${cidr}`);
  return { family: ip.family, network: ip.value, prefix: Number(prefix) };
}

/** IPv4 special-purpose ranges, most specific first. Anything else is public. */
const V4_RANGES: readonly (readonly [Range, AddressKind])[] = [
  [range('255.255.255.255/32'), 'broadcast'],
  [range('0.0.0.0/8'), 'unspecified'],
  [range('10.0.0.0/8'), 'private'],
  [range('100.64.0.0/10'), 'shared'],
  [range('127.0.0.0/8'), 'loopback'],
  [range('169.254.0.0/16'), 'link-local'],
  [range('172.16.0.0/12'), 'private'],
  [range('192.0.0.0/24'), 'reserved'],
  [range('192.0.2.0/24'), 'documentation'],
  [range('192.88.99.0/24'), 'reserved'],
  [range('192.168.0.0/16'), 'private'],
  [range('198.18.0.0/15'), 'reserved'],
  [range('198.51.100.0/24'), 'documentation'],
  [range('203.0.113.0/24'), 'documentation'],
  [range('224.0.0.0/4'), 'multicast'],
  [range('240.0.0.0/4'), 'reserved'],
];

/** IPv6 special-purpose ranges, most specific first. Outside 2000::/3 nothing is public. */
const V6_RANGES: readonly (readonly [Range, AddressKind])[] = [
  [range('::/128'), 'unspecified'],
  [range('::1/128'), 'loopback'],
  [range('::/96'), 'reserved'], // IPv4-compatible (deprecated)
  [range('64:ff9b:1::/48'), 'private'], // local-use NAT64
  [range('100::/64'), 'reserved'], // discard-only
  [range('2001:db8::/32'), 'documentation'],
  [range('2001::/23'), 'reserved'], // IETF protocol assignments, Teredo, benchmarking, ORCHID
  [range('3fff::/20'), 'documentation'],
  [range('5f00::/16'), 'reserved'], // SRv6 SIDs
  [range('fc00::/7'), 'private'], // unique local
  [range('fe80::/10'), 'link-local'],
  [range('fec0::/10'), 'private'], // site-local (deprecated)
  [range('ff00::/8'), 'multicast'],
];
const V6_GLOBAL = range('2000::/3');
/** IPv6 prefixes that carry an IPv4 address a connection may end up at. */
const NAT64 = range('64:ff9b::/96');
const SIX_TO_FOUR = range('2002::/16');

const METADATA: readonly IpAddress[] = [
  { family: 4, value: parseV4('169.254.169.254') }, // AWS, GCP, Azure, OpenStack, ...
  { family: 4, value: parseV4('169.254.170.2') }, // AWS ECS task metadata
  { family: 4, value: parseV4('100.100.100.200') }, // Alibaba Cloud
  { family: 6, value: parseV6('fd00:ec2::254') }, // AWS (IPv6)
];

function classifyV4(value: bigint): AddressClass {
  const ip: IpAddress = { family: 4, value };
  const metadata = METADATA.some((m) => m.family === 4 && m.value === value);
  const kind = V4_RANGES.find(([r]) => inRange(ip, r))?.[1] ?? 'public';
  return metadata ? { kind, metadata } : { kind };
}

/** What an address is. IPv4-mapped, NAT64 and 6to4 IPv6 addresses are what their IPv4 address is. */
export function classifyIp(ip: IpAddress): AddressClass {
  if (ip.family === 4) return classifyV4(ip.value);
  let embedded: bigint | undefined;
  if (ip.value >> 32n === 0xffffn || inRange(ip, NAT64)) embedded = ip.value & V4_MAX;
  else if (inRange(ip, SIX_TO_FOUR)) embedded = (ip.value >> 80n) & V4_MAX;
  if (embedded !== undefined) return { ...classifyV4(embedded), embedded: formatV4(embedded) };
  const special = V6_RANGES.find(([r]) => inRange(ip, r))?.[1];
  const metadata = METADATA.some((m) => m.family === 6 && m.value === ip.value);
  const kind = special ?? (inRange(ip, V6_GLOBAL) ? 'public' : 'reserved');
  return metadata ? { kind, metadata } : { kind };
}

/** What an address is, from its text; undefined when the text is not an IP address. */
export function classifyAddress(address: string): AddressClass | undefined {
  const ip = parseIp(address);
  return ip ? classifyIp(ip) : undefined;
}

const REASONS: Record<AddressKind, string> = {
  loopback: "loopback address (this server's own machine)",
  public: 'public address',
  private: 'private address',
  'link-local': 'link-local address',
  shared: 'carrier-grade NAT address',
  multicast: 'multicast address',
  unspecified: 'unspecified address',
  broadcast: 'broadcast address',
  documentation: 'documentation address',
  reserved: 'reserved address',
};

function describe(klass: AddressClass): string {
  const what = klass.metadata ? 'cloud metadata address' : REASONS[klass.kind];
  return klass.embedded ? `${what} (embeds ${klass.embedded})` : what;
}

const HOST_NAME = /^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** The port an entry allows: one, or every port (undefined). */
type Port = number | undefined;

interface AllowList {
  /** Host name → the ports allowed (`undefined` in the list: every port). */
  readonly names: ReadonlyMap<string, readonly Port[]>;
  /** `example.com` for an entry `*.example.com`. */
  readonly suffixes: readonly { readonly suffix: string; readonly port: Port; readonly entry: string }[];
  readonly ranges: readonly (Range & { readonly entry: string; readonly port: Port })[];
  readonly entries: readonly string[];
}

function normaliseHost(host: string): string {
  return stripBrackets(host.trim().toLowerCase()).replace(/\.$/, '');
}

/** A range as IPv4 when it lies inside ::ffff:0:0/96 (so `::ffff:10.0.0.0/104` and `10.0.0.0/8` agree). */
function unmapRange(r: Range): Range {
  if (r.family === 6 && r.prefix >= 96 && r.network >> 32n === 0xffffn) {
    return { family: 4, network: r.network & V4_MAX, prefix: r.prefix - 96 };
  }
  return r;
}

function invalidEntry(entry: string, why: string): PlatformError {
  return PlatformError.invalid(`Invalid allowed host "${entry}": ${why}`, [{ path: ['allowedHosts'], code: 'custom', message: why }]);
}

/**
 * An entry split into what it names and its port: `[v6]:port`, `host:port` and `a.b.c.d:port`
 * carry one; a bare IPv6 address (several colons) and a CIDR range never do.
 */
function splitPort(entry: string): { readonly target: string; readonly port: Port } {
  let target = entry;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(entry);
  if (bracketed) {
    target = bracketed[1] as string;
    portText = bracketed[2];
  } else if (!entry.includes('/') && entry.indexOf(':') > 0 && entry.indexOf(':') === entry.lastIndexOf(':')) {
    target = entry.slice(0, entry.indexOf(':'));
    portText = entry.slice(entry.indexOf(':') + 1);
  }
  if (portText === undefined) return { target, port: undefined };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw invalidEntry(entry, 'the port must be a number from 1 to 65535');
  }
  return { target, port: Number(portText) };
}

/** An entry as written back: `host`, `host:port`, `[v6]:port`. */
function withPort(target: string, port: Port): string {
  if (port === undefined) return target;
  return `${target.includes(':') ? `[${target}]` : target}:${port}`;
}

function parseAllowList(entries: readonly string[]): AllowList {
  const names = new Map<string, Port[]>();
  const suffixes: { suffix: string; port: Port; entry: string }[] = [];
  const ranges: (Range & { entry: string; port: Port })[] = [];
  const normalised: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    if (slash >= 0) {
      const ip = parseIp(entry.slice(0, slash));
      const prefixText = entry.slice(slash + 1);
      if (!ip) throw invalidEntry(entry, 'a CIDR range needs an IP address before the "/"');
      if (prefixText.includes(':')) throw invalidEntry(entry, 'a CIDR range takes no port (name one address with its port instead)');
      const bits = ip.family === 4 ? 32 : 128;
      if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) {
        throw invalidEntry(entry, `the prefix length must be 0 to ${bits}`);
      }
      const prefix = Number(prefixText);
      const max = ip.family === 4 ? V4_MAX : V6_MAX;
      const hostBits = BigInt(bits - prefix);
      const network = ip.value & (max ^ ((1n << hostBits) - 1n));
      const canonical = `${formatIp({ family: ip.family, value: network })}/${prefix}`;
      ranges.push({ ...unmapRange({ family: ip.family, network, prefix }), entry: canonical, port: undefined });
      normalised.push(canonical);
      continue;
    }
    const whole = parseIp(entry);
    const { target, port } = whole ? { target: entry, port: undefined } : splitPort(entry);
    const ip = whole ?? parseIp(target);
    if (ip) {
      const canonical = withPort(formatIp(ip), port);
      ranges.push({ ...unmapRange({ family: ip.family, network: ip.value, prefix: ip.family === 4 ? 32 : 128 }), entry: canonical, port });
      normalised.push(canonical);
      continue;
    }
    const host = normaliseHost(target);
    if (!HOST_NAME.test(host) || host.length > 253) throw invalidEntry(entry, 'not a host name, IP address or CIDR range (with an optional :port)');
    if (host.startsWith('*.')) suffixes.push({ suffix: host.slice(2), port, entry: withPort(host, port) });
    else names.set(host, [...(names.get(host) ?? []), port]);
    normalised.push(withPort(host, port));
  }
  return { names, suffixes, ranges, entries: normalised };
}

/** Does an entry's port allow `port`? An entry without one allows every port; one with a port only that port. */
const portAllows = (allowed: Port, port: number | undefined) => allowed === undefined || allowed === port;

function hostMatch(list: AllowList, host: string, port: number | undefined): string | undefined {
  const name = normaliseHost(host);
  const ports = list.names.get(name);
  if (ports?.includes(undefined)) return name;
  if (port !== undefined && ports?.includes(port)) return withPort(name, port);
  return list.suffixes.find((s) => name.endsWith(`.${s.suffix}`) && portAllows(s.port, port))?.entry;
}

function rangeMatch(list: AllowList, ip: IpAddress, port: number | undefined): string | undefined {
  const plain = unmap(ip);
  return list.ranges.find((r) => inRange(plain, r) && portAllows(r.port, port))?.entry;
}

/** The port a URL's connection goes to: the one it names, else its scheme's (443 for https, else 80). */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/**
 * The allow-list entry of exactly a URL's host and port (`127.0.0.1:11434`, `[::1]:1234`,
 * `models.internal:443`), for allowing one address the operator configured; undefined when the
 * text is not a URL with a host.
 */
export function hostPortEntry(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (!parsed.hostname) return undefined;
  return withPort(normaliseHost(parsed.hostname), portOf(parsed));
}

/**
 * Splits an allow-list as written in `AGENT_PLATFORM_ALLOWED_HOSTS` (commas and/or whitespace
 * between entries).
 */
export function parseAllowedHosts(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter((entry) => entry !== '');
}

/**
 * The policy: public addresses are allowed; loopback (127.0.0.0/8, ::1, and every form that
 * carries them: IPv4-mapped, NAT64, 6to4, host names that resolve there), private, link-local
 * (cloud metadata), carrier-grade NAT, multicast, broadcast, unspecified (0.0.0.0, ::),
 * documentation and other reserved addresses are refused unless an allow-list entry matches
 * the host name or the address (and the port, when the entry names one). Loopback is where the
 * server's own machine keeps its unauthenticated services (a database, a vector store, a model
 * server): a URL a caller gives reaches it only where the operator said so. With
 * `allowlistOnly`, only allow-listed hosts and ranges are reachable. Throws `invalid_request`
 * for an entry that is neither a host name, an IP address nor a CIDR range (with a valid port).
 */
export function createOutboundPolicy(options: OutboundPolicyOptions = {}): OutboundPolicy {
  const list = parseAllowList(options.allowedHosts ?? []);
  const allowlistOnly = options.allowlistOnly === true;
  return {
    allowlistOnly,
    allowedHosts: list.entries,
    check(host: string, address: string, port?: number): PolicyDecision {
      const ip = parseIp(address);
      if (!ip) return { allowed: false, kind: 'invalid', reason: 'not an IP address' };
      const klass = classifyIp(ip);
      const matched = hostMatch(list, host, port) ?? rangeMatch(list, ip, port);
      if (matched !== undefined) return { allowed: true, kind: klass.kind, matched };
      if (allowlistOnly) return { allowed: false, kind: klass.kind, reason: 'not in the allowed hosts (--allowed-hosts-only)' };
      if (klass.kind === 'public') return { allowed: true, kind: klass.kind };
      return { allowed: false, kind: klass.kind, reason: describe(klass) };
    },
  };
}

/**
 * The refusal for `host` at `address` (on `port`): `invalid_request`, naming the host, the
 * address, the reason and the entry that would allow it (`--allow-host 127.0.0.1:1234`, the
 * host as the URL names it with the port; `--allow-host` alone when the port is not known).
 */
export function refusalError(host: string, address: string, reason: string, port?: number): PlatformError {
  const name = stripBrackets(host);
  const where = name.toLowerCase() === address.toLowerCase() ? name : `${name} (${address})`;
  const entry = port === undefined ? '' : ` ${withPort(normaliseHost(name), port)}`;
  return new PlatformError('invalid_request', `Refused to connect to ${where}: ${reason}; allow it with --allow-host${entry}`, {
    details: { host: name, address, reason, ...(port === undefined ? {} : { port }) },
  });
}
