import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the server's thread.
 *
 * With SQLite's automatic checkpoint, the commit that takes the WAL past 1,000 pages copies the
 * WAL into the database file and syncs it before returning: 30-60 ms of a synchronous
 * better-sqlite3 call on the main thread after a document of thousands of chunks (measured
 * here: commits of 8,000 rows took 45-66 ms with it, 11-19 ms without), during which no
 * request is answered. So a file database opens with `wal_autocheckpoint = 0`, and one worker
 * thread per process, holding its own connection to each open file, runs a PASSIVE checkpoint
 * of each every `CHECKPOINT_INTERVAL_MS`. PASSIVE never waits for readers or writers, so the
 * main thread's transactions never wait for it either; once a checkpoint has copied the whole
 * WAL, the next writer starts the WAL over (and `journal_size_limit` trims the file).
 */

/** How often the worker checkpoints each open database. */
export const CHECKPOINT_INTERVAL_MS = 500;

// The worker's code, run as CommonJS (eval), with better-sqlite3 resolved by the main thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
const open = new Map();
const checkpoint = (db) => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or gone: next tick */ }
};
setInterval(() => { for (const db of open.values()) checkpoint(db); }, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m.op === 'open') {
    try {
      const db = new Database(m.path, { fileMustExist: true });
      db.pragma('busy_timeout = 0');
      open.set(m.id, db);
      parentPort.postMessage({ op: 'opened', id: m.id });
    } catch (error) {
      parentPort.postMessage({ op: 'failed', id: m.id, message: String(error && error.message) });
    }
  } else if (m.op === 'close') {
    const db = open.get(m.id);
    open.delete(m.id);
    if (db) { checkpoint(db); db.close(); }
    parentPort.postMessage({ op: 'closed', id: m.id });
  }
});
`;

interface Pending {
  resolve(): void;
  reject(error: Error): void;
}

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();
/** Databases the worker checkpoints, with what to do if it stops doing so. */
const live = new Map<number, (error: Error) => void>();

function start(): Worker {
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3'), intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  w.on('message', (m: { op: string; id: number; message?: string }) => {
    const waiter = pending.get(m.id);
    pending.delete(m.id);
    if (pending.size === 0) w.unref();
    if (m.op === 'failed') waiter?.reject(new Error(m.message));
    else waiter?.resolve();
  });
  // An error or exit nobody asked for: every database it held goes back to SQLite's checkpoints.
  const gone = (error: Error) => {
    if (worker !== w) return; // terminated on purpose (no database left), or already handled
    worker = undefined;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
    for (const onLost of live.values()) onLost(error);
    live.clear();
  };
  w.on('error', gone);
  w.on('exit', (code) => gone(new Error(`the checkpoint worker exited with code ${code}`)));
  // An open database does not keep the process alive (its owner closes it); a request does,
  // until answered (see send). After the 'message' listener: adding the first one refs the
  // worker's port again.
  w.unref();
  return w;
}

function send(op: 'open' | 'close', id: number, path?: string): Promise<void> {
  worker ??= start();
  const w = worker;
  return new Promise<void>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ op, id, path });
  });
}

/** A database file checkpointed by the worker; `stop()` before the main connection closes. */
export interface Checkpointing {
  stop(): Promise<void>;
}

/**
 * Hands the WAL checkpoints of the database file at `path` to the worker. When the worker
 * cannot open it (or dies later), `onLost` runs so the caller can give checkpoints back to
 * SQLite's automatic ones: the WAL must never grow without bound.
 */
export async function checkpointInWorker(path: string, onLost: (error: Error) => void): Promise<Checkpointing> {
  const id = nextId++;
  try {
    await send('open', id, path);
  } catch (error) {
    onLost(error as Error);
    return { stop: async () => {} };
  }
  live.set(id, onLost);
  return {
    async stop() {
      if (!live.delete(id) || !worker) return;
      await send('close', id).catch(() => {});
      if (live.size === 0 && pending.size === 0 && worker) {
        const done = worker;
        worker = undefined;
        await done.terminate();
      }
    },
  };
}
