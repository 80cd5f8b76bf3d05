import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChunkRecord } from '@agent-platform/core';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_INTERVAL_MS, checkpointInWorker } from '../src/sqlite/checkpointer.js';
import { sqliteStorage } from '../src/sqlite/index.js';
import { withDocument } from './one-document.js';

// A commit that took the WAL past 1,000 pages used to checkpoint it on the committing thread
// (30-60 ms of main thread after a big document). Checkpoints now run on a worker thread.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-checkpoints-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** 3,000 chunks of ~1 KB: several MB of WAL, far past the 1,000 pages of SQLite's automatic checkpoint. */
const chunks = (round: number): ChunkRecord[] =>
  Array.from({ length: 3000 }, (_, index) => ({
    id: `chunk_${round}_${index}`,
    documentId: 'doc_1',
    projectId: 'proj_1',
    index,
    text: `round ${round} chunk ${index} ${'lorem ipsum dolor sit amet '.repeat(40)}`,
    tokenCount: 200,
    metadata: {},
  }));

const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return check();
};

describe('sqlite checkpoints', () => {
  it('never checkpoint on the committing thread; the worker moves the WAL into the file soon after', async () => {
    const path = join(dir, 'big.sqlite');
    const storage = await sqliteStorage({ path });
    try {
      await withDocument(storage);
      // The schema and the document are in the WAL at first: the worker moves them into the file
      // (a fresh file is one page) before the measured commit, so the size taken as "before" is
      // not grown by that checkpoint later.
      expect(await until(() => size(path) > 4096, 20 * CHECKPOINT_INTERVAL_MS)).toBe(true);
      // Settled: unchanged over two of the worker's intervals.
      for (let settled = -1; settled !== size(path); ) {
        settled = size(path);
        await new Promise((r) => setTimeout(r, 2 * CHECKPOINT_INTERVAL_MS));
      }
      const before = size(path);
      await storage.chunks.replaceForDocument('doc_1', chunks(1));
      // Right after the commit (SQLite's automatic checkpoint would have run inside it and grown
      // the file), the chunks are only in the WAL.
      expect(size(`${path}-wal`)).toBeGreaterThan(4 * 1024 * 1024);
      expect(size(path)).toBe(before);
      // The worker's next checkpoints copy them into the database file.
      expect(await until(() => size(path) > before + 3 * 1024 * 1024, 20 * CHECKPOINT_INTERVAL_MS)).toBe(true);
      // A writer after a complete checkpoint starts the WAL over instead of growing it.
      const walAfterFirst = size(`${path}-wal`);
      await new Promise((r) => setTimeout(r, 3 * CHECKPOINT_INTERVAL_MS));
      await storage.chunks.replaceForDocument('doc_1', chunks(2));
      expect(size(`${path}-wal`)).toBeLessThanOrEqual(walAfterFirst * 1.2);
    } finally {
      await storage.close();
    }
    // Closed: the data is all in the file, readable by another connection.
    const raw = new BetterSqlite3(path, { readonly: true });
    try {
      expect((raw.prepare('select count(*) as n from chunks').get() as { n: number }).n).toBe(3000);
    } finally {
      raw.close();
    }
  });

  it('serve several databases from one worker, and each reopens after close', async () => {
    const paths = [join(dir, 'a.sqlite'), join(dir, 'b.sqlite')];
    for (let round = 0; round < 2; round++) {
      const storages = await Promise.all(paths.map((path) => sqliteStorage({ path })));
      try {
        if (round === 0) for (const s of storages) await withDocument(s);
        await Promise.all(storages.map((s) => s.chunks.replaceForDocument('doc_1', chunks(round))));
        for (const path of paths) expect(await until(() => size(path) > 3 * 1024 * 1024, 20 * CHECKPOINT_INTERVAL_MS)).toBe(true);
      } finally {
        await Promise.all(storages.map((s) => s.close()));
      }
    }
  });

  it('give the checkpoints back to the caller when the worker cannot open the file', async () => {
    const lost: Error[] = [];
    const handle = await checkpointInWorker(join(dir, 'missing', 'none.sqlite'), (error) => lost.push(error));
    expect(lost).toHaveLength(1);
    expect(lost[0]?.message).toMatch(/unable to open|no such file|does not exist/i);
    await handle.stop();
  });
});
