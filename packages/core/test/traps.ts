import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * Traps: listeners on addresses the outbound policy refuses, which count every connection.
 *
 * Inside the tests' loopback-only network namespace (`sh scripts/isolated.sh`, which sets
 * AGENT_PLATFORM_TEST_NETNS=1) the refused addresses below are added to the namespace's own
 * loopback interface, so a connection the policy should have stopped really arrives there and
 * is counted, instead of failing on an unreachable network (which would prove nothing).
 * Outside the namespace nothing is changed on the machine: `trapsAvailable` is false and the
 * tests that need a trap are skipped.
 */

/** A private address (10.0.0.0/8). */
export const PRIVATE_TRAP = '10.0.0.1';
/** The cloud metadata address (link-local). */
export const METADATA_TRAP = '169.254.169.254';

/** True inside the loopback-only namespace of scripts/isolated.sh (and nowhere else). */
export const trapsAvailable = process.env.AGENT_PLATFORM_TEST_NETNS === '1' && Object.keys(networkInterfaces()).every((name) => name === 'lo');

let addressesAdded = false;

/** Puts the trap addresses on the namespace's loopback interface (once). Throws outside the namespace. */
export function ensureTrapAddresses(): void {
  if (addressesAdded) return;
  if (!trapsAvailable) throw new Error('traps need the loopback-only namespace: run the tests with sh scripts/isolated.sh');
  for (const address of [PRIVATE_TRAP, METADATA_TRAP]) {
    const present = execFileSync('ip', ['-o', 'addr', 'show', 'dev', 'lo'], { encoding: 'utf8' }).includes(` ${address}/`);
    if (!present) execFileSync('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo']);
  }
  addressesAdded = true;
}

export interface Trap {
  readonly host: string;
  readonly port: number;
  /** `http://<host>:<port>` */
  readonly url: string;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** `METHOD path` of each HTTP request received. */
  readonly requests: readonly string[];
  close(): Promise<void>;
}

/**
 * A listener on `host` (default the private trap address) and `port` (default: a free one) that
 * counts connections and answers every request `200 trapped` (closing the connection, so each
 * request is a new connection).
 */
export async function startTrap(host: string = PRIVATE_TRAP, port = 0): Promise<Trap> {
  ensureTrapAddresses();
  let connections = 0;
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' }).end('trapped');
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    host,
    port: bound,
    url: `http://${host}:${bound}`,
    get connections() {
      return connections;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Forwarder {
  readonly host: string;
  readonly port: number;
  /** `http://<host>:<port>` */
  readonly url: string;
  /** TCP connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * A TCP forwarder on a refused address (default the private trap address) to a test server on
 * loopback, counting connections: a store configured with the forwarder's address would reach
 * the real test server behind it, so a refusal is the guard's doing and a count of 0 proves no
 * connection was made.
 */
export async function startForwarder(target: { readonly host?: string; readonly port: number }, host: string = PRIVATE_TRAP, port = 0): Promise<Forwarder> {
  ensureTrapAddresses();
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections++;
    const upstream = connect(target.port, target.host ?? '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    host,
    port: bound,
    url: `http://${host}:${bound}`,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
