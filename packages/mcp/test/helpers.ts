import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type ErrorCode, isPlatformError, type PlatformError } from '@agent-platform/core';
import { expect } from 'vitest';

/** server-everything's launcher, from this package's node_modules. */
export const EVERYTHING = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
export const TEST_SERVER = fileURLToPath(new URL('./fixtures/test-server.mjs', import.meta.url));
/** `-r` preloads: listen on 127.0.0.1 only; log the process id to $SPAWN_LOG. */
export const LOOPBACK = fileURLToPath(new URL('./fixtures/loopback.cjs', import.meta.url));
export const SPAWN_LOG = fileURLToPath(new URL('./fixtures/spawn-log.cjs', import.meta.url));

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server process started for a test, with everything it printed. */
export interface ServerProcess {
  readonly port: number;
  readonly child: ChildProcess;
  /** stdout and stderr lines so far. */
  readonly lines: string[];
  count(pattern: RegExp): number;
  stop(): Promise<void>;
}

async function waitForPort(port: number, child: ChildProcess, lines: string[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${lines.join('\n')}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`server did not listen on ${port}: ${lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts `node ...args` with PORT set and waits until the port is taken. */
export async function startServer(args: readonly string[], port?: number): Promise<ServerProcess> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, [...args], { env: { ...process.env, PORT: String(chosen) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  await waitForPort(chosen, child, lines);
  return {
    port: chosen,
    child,
    lines,
    count: (pattern) => lines.filter((line) => pattern.test(line)).length,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** server-everything in one of its HTTP modes, bound to 127.0.0.1. */
export function startEverything(mode: 'streamableHttp' | 'sse'): Promise<ServerProcess> {
  return startServer(['-r', LOOPBACK, EVERYTHING, mode]);
}

/** Waits until `check` holds (polling), or fails after `ms`. */
export async function eventually(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The rejection of `promise`, asserted to be a PlatformError with `code` (and a message matching). */
export async function rejection(promise: Promise<unknown>, code: ErrorCode, message?: RegExp | string): Promise<PlatformError> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  expect(error, 'expected a rejection').toBeDefined();
  if (!isPlatformError(error)) throw new Error(`expected a PlatformError, got ${String(error)}`, { cause: error });
  expect({ code: error.code, message: error.message }).toMatchObject({ code });
  if (message !== undefined) expect(error.message).toMatch(message);
  return error;
}

/** Process ids a SPAWN_LOG file holds. */
export function spawned(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}
