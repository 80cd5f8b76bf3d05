import { describe, expect, it } from 'vitest';
import { isPlatformError } from '../src/errors.js';
import { classifyAddress, createOutboundPolicy, formatIp, parseAllowedHosts, parseIp, refusalError } from '../src/net/policy.js';

const open = createOutboundPolicy();

/** The decision for an IP literal (host = address). */
const decide = (address: string, policy = open) => policy.check(address, address);

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['100.128.0.0', 'public'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'reserved'], // Teredo
    ['::10.0.0.1', 'reserved'], // IPv4-compatible
    ['4000::1', 'reserved'], // outside 2000::/3
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)?.kind).toBe(kind);
  });

  it('classifies IPv6 forms that carry an IPv4 address as that address', () => {
    expect(classifyAddress('::ffff:10.0.0.1')).toEqual({ kind: 'private', embedded: '10.0.0.1' });
    expect(classifyAddress('::ffff:a00:1')).toEqual({ kind: 'private', embedded: '10.0.0.1' });
    expect(classifyAddress('::ffff:127.0.0.1')).toEqual({ kind: 'loopback', embedded: '127.0.0.1' });
    expect(classifyAddress('::ffff:8.8.8.8')).toEqual({ kind: 'public', embedded: '8.8.8.8' });
    expect(classifyAddress('::ffff:169.254.169.254')).toEqual({ kind: 'link-local', embedded: '169.254.169.254', metadata: true });
    expect(classifyAddress('64:ff9b::a9fe:a9fe')).toMatchObject({ kind: 'link-local', embedded: '169.254.169.254' }); // NAT64
    expect(classifyAddress('2002:c0a8:0101::1')).toMatchObject({ kind: 'private', embedded: '192.168.1.1' }); // 6to4
  });

  it('marks cloud metadata endpoints', () => {
    expect(classifyAddress('169.254.169.254')?.metadata).toBe(true);
    expect(classifyAddress('fd00:ec2::254')).toEqual({ kind: 'private', metadata: true });
    expect(classifyAddress('169.254.1.1')?.metadata).toBeUndefined();
  });

  it('answers undefined for what is not an IP address', () => {
    expect(classifyAddress('example.com')).toBeUndefined();
    expect(classifyAddress('10.0.0.256')).toBeUndefined();
    expect(classifyAddress('')).toBeUndefined();
  });
});

describe('parseIp and formatIp', () => {
  it('round-trips to the canonical text', () => {
    for (const [text, canonical] of [
      ['127.0.0.1', '127.0.0.1'],
      ['[::1]', '::1'],
      ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
      ['::ffff:10.0.0.1', '::ffff:a00:1'],
      ['fe80::1%lo0', 'fe80::1'],
      ['1:0:0:1:0:0:0:1', '1:0:0:1::1'],
      ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
      ['::', '::'],
    ] as const) {
      const ip = parseIp(text);
      expect(ip, text).toBeDefined();
      expect(formatIp(ip as NonNullable<typeof ip>)).toBe(canonical);
    }
  });
});

describe('createOutboundPolicy (default: public addresses only)', () => {
  it('allows public addresses', () => {
    for (const address of ['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(decide(address).allowed, address).toBe(true);
    }
    expect(open.check('example.com', '93.184.215.14', 443)).toEqual({ allowed: true, kind: 'public' });
  });

  it('refuses loopback in every form: 127.0.0.0/8, ::1, IPv4-mapped, NAT64, 6to4, and names that resolve there', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', "loopback address (this server's own machine)"],
      ['127.1.2.3', "loopback address (this server's own machine)"],
      ['127.255.255.254', "loopback address (this server's own machine)"],
      ['::1', "loopback address (this server's own machine)"],
      ['::ffff:127.0.0.1', "loopback address (this server's own machine) (embeds 127.0.0.1)"],
      ['::ffff:7f00:1', "loopback address (this server's own machine) (embeds 127.0.0.1)"],
      ['64:ff9b::7f00:1', "loopback address (this server's own machine) (embeds 127.0.0.1)"],
      ['2002:7f00:1::1', "loopback address (this server's own machine) (embeds 127.0.0.1)"],
    ];
    for (const [address, reason] of cases) {
      expect(decide(address), address).toEqual({ allowed: false, kind: 'loopback', reason });
      expect(open.check(address, address, 1234).allowed, `${address} port 1234`).toBe(false);
    }
    // A host name is judged by what it resolves to.
    expect(open.check('localhost', '127.0.0.1', 11434)).toMatchObject({ allowed: false, kind: 'loopback' });
    expect(open.check('localtest.me', '::1', 80)).toMatchObject({ allowed: false, kind: 'loopback' });
    // The bind-all addresses, which connect to this machine too.
    expect(open.check('0.0.0.0', '0.0.0.0', 5432)).toMatchObject({ allowed: false, kind: 'unspecified' });
    expect(open.check('::', '::', 5432)).toMatchObject({ allowed: false, kind: 'unspecified' });
  });

  it('refuses private, link-local, CGNAT, multicast and reserved addresses with the reason', () => {
    const cases: [string, string][] = [
      ['10.0.0.5', 'private address'],
      ['172.20.1.1', 'private address'],
      ['192.168.0.10', 'private address'],
      ['fd00::1', 'private address'],
      ['169.254.169.254', 'cloud metadata address'],
      ['169.254.10.10', 'link-local address'],
      ['fe80::abcd', 'link-local address'],
      ['100.64.1.1', 'carrier-grade NAT address'],
      ['224.0.0.251', 'multicast address'],
      ['ff05::2', 'multicast address'],
      ['0.0.0.0', 'unspecified address'],
      ['::', 'unspecified address'],
      ['240.1.2.3', 'reserved address'],
      ['255.255.255.255', 'broadcast address'],
      ['192.0.2.10', 'documentation address'],
      ['2001:db8::5', 'documentation address'],
      ['::ffff:10.0.0.1', 'private address (embeds 10.0.0.1)'],
      ['::ffff:169.254.169.254', 'cloud metadata address (embeds 169.254.169.254)'],
    ];
    for (const [address, reason] of cases) {
      expect(decide(address), address).toEqual({ allowed: false, kind: expect.any(String), reason });
    }
  });

  it('refuses what is not an IP address', () => {
    expect(open.check('x', 'not-an-ip')).toEqual({ allowed: false, kind: 'invalid', reason: 'not an IP address' });
  });
});

describe('allow-list', () => {
  const policy = createOutboundPolicy({
    allowedHosts: ['ollama.internal', '*.corp.example', '10.0.0.0/8', '192.168.1.7', 'fd00:1234::/32', '[fe80::1]'],
  });

  it('allows a host by name, whatever it resolves to', () => {
    expect(policy.check('ollama.internal', '10.9.9.9')).toEqual({ allowed: true, kind: 'private', matched: 'ollama.internal' });
    expect(policy.check('OLLAMA.INTERNAL.', '192.168.5.5').allowed).toBe(true);
    expect(policy.check('other.internal', '192.168.5.5').allowed).toBe(false);
  });

  it('allows subdomains of a wildcard entry, not the bare domain', () => {
    expect(policy.check('models.corp.example', '172.16.0.3')).toMatchObject({ allowed: true, matched: '*.corp.example' });
    expect(policy.check('a.b.corp.example', '172.16.0.3').allowed).toBe(true);
    expect(policy.check('corp.example', '172.16.0.3').allowed).toBe(false);
    expect(policy.check('evilcorp.example', '172.16.0.3').allowed).toBe(false);
  });

  it('allows addresses inside an IPv4 or IPv6 CIDR or equal to an allowed IP', () => {
    expect(policy.check('x.example', '10.1.2.3')).toMatchObject({ allowed: true, matched: '10.0.0.0/8' });
    expect(policy.check('x.example', '::ffff:10.1.2.3')).toMatchObject({ allowed: true, matched: '10.0.0.0/8' });
    expect(policy.check('x.example', '11.0.0.1').allowed).toBe(true); // public anyway
    expect(policy.check('x.example', '192.168.1.7')).toMatchObject({ allowed: true, matched: '192.168.1.7' });
    expect(policy.check('x.example', '192.168.1.8').allowed).toBe(false);
    expect(policy.check('x.example', 'fd00:1234:5::1')).toMatchObject({ allowed: true, matched: 'fd00:1234::/32' });
    expect(policy.check('x.example', 'fd00:1235::1').allowed).toBe(false);
    expect(policy.check('x.example', 'fe80::1')).toMatchObject({ allowed: true, matched: 'fe80::1' });
    expect(policy.check('x.example', 'fe80::2').allowed).toBe(false);
    expect(policy.check('169.254.169.254', '169.254.169.254').allowed).toBe(false);
  });

  it('normalises entries (lower case, network address of a CIDR)', () => {
    const p = createOutboundPolicy({ allowedHosts: ['Ollama.Internal', '10.1.2.3/8', '::ffff:192.168.0.0/112', ' '] });
    expect(p.allowedHosts).toEqual(['ollama.internal', '10.0.0.0/8', '::ffff:c0a8:0/112']);
    expect(p.check('x', '192.168.3.4').allowed).toBe(true); // the mapped range covers the plain IPv4 address
    expect(p.check('x', '192.169.0.1').allowed).toBe(true); // public
    expect(p.check('x', '192.168.0.1')).toMatchObject({ allowed: true, matched: '::ffff:c0a8:0/112' });
  });

  it('refuses entries that are neither a host, an IP nor a CIDR', () => {
    for (const entry of ['10.0.0.0/33', 'fd00::/129', 'bad host', 'http://x.example', 'x/8', '10.0.0.0/', '10.0.0.0/abc']) {
      let error: unknown;
      try {
        createOutboundPolicy({ allowedHosts: [entry] });
      } catch (e) {
        error = e;
      }
      expect(isPlatformError(error), entry).toBe(true);
      expect((error as Error).message).toContain(`Invalid allowed host "${entry}"`);
    }
  });
});

describe('allow-list entries with a port', () => {
  const policy = createOutboundPolicy({ allowedHosts: ['127.0.0.1:1234', '[::1]:11434', 'localhost:8080', 'models.internal:8443', '*.corp.example:9000', '10.0.0.9'] });

  it('allow exactly that port of the address, and no other', () => {
    expect(policy.check('127.0.0.1', '127.0.0.1', 1234)).toEqual({ allowed: true, kind: 'loopback', matched: '127.0.0.1:1234' });
    expect(policy.check('127.0.0.1', '127.0.0.1', 1235)).toMatchObject({ allowed: false, kind: 'loopback' });
    expect(policy.check('127.0.0.1', '127.0.0.1', 5432).allowed).toBe(false);
    expect(policy.check('127.0.0.2', '127.0.0.2', 1234).allowed).toBe(false); // another loopback address
    expect(policy.check('::1', '::1', 11434)).toMatchObject({ allowed: true, matched: '[::1]:11434' });
    expect(policy.check('::1', '::1', 1234).allowed).toBe(false);
    // The address is what counts: the mapped form of 127.0.0.1 and a name resolving to it.
    expect(policy.check('::ffff:7f00:1', '::ffff:7f00:1', 1234)).toMatchObject({ allowed: true, matched: '127.0.0.1:1234' });
    expect(policy.check('lm.test', '127.0.0.1', 1234)).toMatchObject({ allowed: true, matched: '127.0.0.1:1234' });
    // Without a port, an entry with one allows nothing.
    expect(policy.check('127.0.0.1', '127.0.0.1').allowed).toBe(false);
  });

  it('allow a host name on that port, whatever it resolves to', () => {
    expect(policy.check('localhost', '127.0.0.1', 8080)).toEqual({ allowed: true, kind: 'loopback', matched: 'localhost:8080' });
    expect(policy.check('localhost', '::1', 8080).allowed).toBe(true);
    expect(policy.check('localhost', '127.0.0.1', 8081).allowed).toBe(false);
    expect(policy.check('127.0.0.1', '127.0.0.1', 8080).allowed).toBe(false); // the name was allowed, not the address
    expect(policy.check('models.internal', '10.1.1.1', 8443)).toMatchObject({ allowed: true, matched: 'models.internal:8443' });
    expect(policy.check('models.internal', '10.1.1.1', 443).allowed).toBe(false);
    expect(policy.check('a.corp.example', '10.1.1.1', 9000)).toMatchObject({ allowed: true, matched: '*.corp.example:9000' });
    expect(policy.check('a.corp.example', '10.1.1.1', 9001).allowed).toBe(false);
  });

  it('an entry without a port allows every port of it', () => {
    const bare = createOutboundPolicy({ allowedHosts: ['127.0.0.1', 'localhost'] });
    for (const port of [1, 1234, 5432, 65535]) expect(bare.check('127.0.0.1', '127.0.0.1', port)).toMatchObject({ allowed: true, matched: '127.0.0.1' });
    expect(bare.check('localhost', '::1', 6333)).toMatchObject({ allowed: true, matched: 'localhost' });
    expect(bare.check('::1', '::1', 6333).allowed).toBe(false); // 127.0.0.1 is not ::1
    expect(policy.check('10.0.0.9', '10.0.0.9', 5432).allowed).toBe(true);
  });

  it('are normalised, and refused when the port is not one', () => {
    const p = createOutboundPolicy({ allowedHosts: ['LocalHost:1234', '[::1]:80', '[0:0:0:0:0:0:0:1]:81', '127.0.0.1:82', '*.Corp.Example:9000'] });
    expect(p.allowedHosts).toEqual(['localhost:1234', '[::1]:80', '[::1]:81', '127.0.0.1:82', '*.corp.example:9000']);
    // Entries as normalised read back as the same entries (withPolicy builds policies from them).
    expect(createOutboundPolicy({ allowedHosts: p.allowedHosts }).allowedHosts).toEqual(p.allowedHosts);
    for (const entry of ['127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1:', 'localhost:http', '[::1]:', '[::1]:x', '10.0.0.0/8:443', ':80', 'a:b:c']) {
      let error: unknown;
      try {
        createOutboundPolicy({ allowedHosts: [entry] });
      } catch (e) {
        error = e;
      }
      expect(isPlatformError(error), entry).toBe(true);
      expect((error as Error).message).toContain(`Invalid allowed host "${entry}"`);
    }
  });
});

describe('allowlistOnly', () => {
  const policy = createOutboundPolicy({ allowlistOnly: true, allowedHosts: ['api.example.com', '127.0.0.1', '10.2.0.0/16'] });

  it('reaches only allow-listed hosts and ranges', () => {
    expect(policy.check('api.example.com', '93.184.215.14').allowed).toBe(true);
    expect(policy.check('127.0.0.1', '127.0.0.1').allowed).toBe(true);
    expect(policy.check('inner', '10.2.3.4').allowed).toBe(true);
  });

  it('refuses public and loopback addresses that are not allow-listed', () => {
    expect(policy.check('other.example.com', '93.184.215.14')).toEqual({
      allowed: false,
      kind: 'public',
      reason: 'not in the allowed hosts (--allowed-hosts-only)',
    });
    expect(policy.check('localhost', '::1').allowed).toBe(false);
    expect(policy.check('inner', '10.3.0.1').allowed).toBe(false);
  });
});

describe('parseAllowedHosts', () => {
  it('splits on commas and whitespace', () => {
    expect(parseAllowedHosts('a.example, 10.0.0.0/8  fd00::/8,,')).toEqual(['a.example', '10.0.0.0/8', 'fd00::/8']);
    expect(parseAllowedHosts(undefined)).toEqual([]);
    expect(parseAllowedHosts('')).toEqual([]);
  });
});

describe('refusalError', () => {
  it('names the host, the address and the reason, as invalid_request', () => {
    const error = refusalError('ollama.internal', '10.0.0.5', 'private address');
    expect(error.code).toBe('invalid_request');
    expect(error.message).toBe('Refused to connect to ollama.internal (10.0.0.5): private address; allow it with --allow-host');
    expect(refusalError('10.0.0.5', '10.0.0.5', 'private address').message).toBe('Refused to connect to 10.0.0.5: private address; allow it with --allow-host');
  });

  it('names the entry that would allow the host and port, IPv6 in brackets', () => {
    expect(refusalError('127.0.0.1', '127.0.0.1', 'loopback address', 1234).message).toBe('Refused to connect to 127.0.0.1: loopback address; allow it with --allow-host 127.0.0.1:1234');
    expect(refusalError('[::1]', '::1', 'loopback address', 11434).message).toBe('Refused to connect to ::1: loopback address; allow it with --allow-host [::1]:11434');
    expect(refusalError('LocalHost', '127.0.0.1', 'loopback address', 80)).toMatchObject({
      message: 'Refused to connect to LocalHost (127.0.0.1): loopback address; allow it with --allow-host localhost:80',
      details: { host: 'LocalHost', address: '127.0.0.1', reason: 'loopback address', port: 80 },
    });
  });
});
