import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PlatformError, type VectorHit, type VectorRecord, type VectorStore } from '@agent-platform/core';
import { createPacer, withRelativePaths } from '@agent-platform/core/internal';
import { HnswIndex, type HnswOptions } from './hnsw.js';
import { LogAppender, type LogRecord, readLog, removeLog, rewriteLog } from './log.js';
import { VectorMatrix } from './matrix.js';

export interface BuiltinVectorStoreOptions {
  /** Folder of the namespace logs. Without it, vectors live in memory only. */
  readonly dir?: string;
  /** How errors name the folder (they reach API callers): default its own name, never its absolute path. */
  readonly label?: string;
  /** Vectors per namespace from which queries use the HNSW index instead of the exact scan. Default `DEFAULT_APPROXIMATE_THRESHOLD`. */
  readonly approximateThreshold?: number;
  readonly hnsw?: HnswOptions;
}

interface Namespace {
  readonly name: string;
  readonly matrix: VectorMatrix;
  hnsw: HnswIndex | undefined;
  /** The tail of this namespace's writes: each applies its records after the previous one's. */
  writes: Promise<void>;
}

/**
 * Vectors per namespace from which a namespace gets its HNSW index (5,000): there the exact scan
 * of 512-d vectors costs about 1.5 ms and grows linearly (3.5 ms at 10,000), while HNSW answers
 * in well under a millisecond with recall@10 of 0.99+ (docs/BENCHMARKS.md "vectors").
 */
export const DEFAULT_APPROXIMATE_THRESHOLD = 5_000;

const fileStem = (namespace: string) => createHash('sha256').update(namespace).digest('hex').slice(0, 32);

/**
 * The built-in vector store: every namespace in memory as one contiguous Float32Array,
 * searched exactly below `approximateThreshold` vectors and with HNSW above it; persisted, when
 * `dir` is given, as an append-only log per namespace that is replayed on open.
 *
 * Durability: a write is appended to the log before the returned promise resolves (the OS has
 * it; a process crash loses nothing acknowledged, a power cut may lose the last writes).
 */
export interface BuiltinVectorStore extends VectorStore {
  /** Whether queries of the namespace use the approximate index (built and ready). */
  isApproximate(namespace: string): boolean;
}

export async function builtinVectorStore(options: BuiltinVectorStoreOptions = {}): Promise<BuiltinVectorStore> {
  const { dir } = options;
  const threshold = options.approximateThreshold ?? DEFAULT_APPROXIMATE_THRESHOLD;
  const namespaces = new Map<string, Namespace>();
  const paths = (ns: string) => {
    const stem = join(dir as string, fileStem(ns));
    return { log: `${stem}.vectors`, meta: `${stem}.json` };
  };

  // File operations of each namespace name run one after another, in call order, so a drop
  // followed at once by writes to the same name cannot remove the new files.
  const disk = new Map<string, Promise<void>>();
  const onDisk = (name: string, op: () => Promise<void>): Promise<void> => {
    const done = (disk.get(name) ?? Promise.resolve()).then(op).catch((error: unknown) => {
      throw withRelativePaths(error, dir as string, options.label);
    });
    const tail = done.catch(() => {});
    disk.set(name, tail);
    void tail.then(() => {
      if (disk.get(name) === tail) disk.delete(name);
    });
    return done;
  };

  // One open append handle per namespace with a log, closed when it is dropped or the store closes.
  const appenders = new Map<string, LogAppender>();
  const appendLog = (name: string, records: readonly LogRecord[]): Promise<void> => {
    let appender = appenders.get(name);
    if (!appender) {
      appender = new LogAppender(paths(name).log);
      appenders.set(name, appender);
    }
    return appender.append(records);
  };

  const maybeIndex = (ns: Namespace) => {
    if (!ns.hnsw && ns.matrix.count >= threshold) {
      ns.hnsw = new HnswIndex(ns.matrix, options.hnsw);
      void ns.hnsw.build();
    }
  };

  /**
   * Runs a write of `ns` after the writes before it, applying its records a slice of main-thread
   * time at a time (thousands of vectors, each an HNSW insertion once the namespace is indexed,
   * would otherwise hold the event loop for hundreds of milliseconds). `records` is computed when
   * the write's turn comes; its log records go to disk in the same order as they were applied.
   */
  const write = (ns: Namespace, records: () => LogRecord[]): Promise<LogRecord[]> => {
    const done = ns.writes.then(async () => {
      const log = records();
      const pace = createPacer();
      for (const record of log) {
        apply(ns, record);
        await pace();
      }
      maybeIndex(ns);
      // A namespace dropped meanwhile keeps no log.
      if (dir && log.length > 0 && namespaces.get(ns.name) === ns) await onDisk(ns.name, () => appendLog(ns.name, log));
      return log;
    });
    ns.writes = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  };

  const apply = (ns: Namespace, record: LogRecord) => {
    if (record.op === 'delete') {
      const label = ns.matrix.remove(record.id);
      if (label !== undefined) ns.hnsw?.removed(label);
      return;
    }
    const { row, replacedLabel } = ns.matrix.set(record.id, record.documentId, record.vector);
    if (replacedLabel !== undefined) ns.hnsw?.removed(replacedLabel);
    ns.hnsw?.added(row);
  };

  if (dir) {
    await mkdir(dir, { recursive: true });
    const files = await readdir(dir);
    // Left by a compaction that a crash interrupted before its rename: the log itself is intact.
    for (const file of files) if (file.endsWith('.tmp')) await rm(join(dir, file), { force: true });
    for (const file of files) {
      if (!file.endsWith('.json')) continue;
      const meta = JSON.parse(await readFile(join(dir, file), 'utf8')) as { namespace: string; dimensions: number };
      const ns: Namespace = { name: meta.namespace, matrix: new VectorMatrix(meta.dimensions), hnsw: undefined, writes: Promise.resolve() };
      const records = await readLog(paths(meta.namespace).log);
      for (const record of records) apply(ns, record);
      // Compact a log that is mostly dead records (replaced or deleted vectors).
      if (records.length > 2 * ns.matrix.count + 1000) {
        const live: LogRecord[] = [];
        for (let row = 0; row < ns.matrix.count; row++) {
          live.push({ op: 'upsert', id: ns.matrix.ids[row] as string, documentId: ns.matrix.documents[ns.matrix.docOf[row] as number] as string, vector: ns.matrix.row(row) });
        }
        await rewriteLog(paths(meta.namespace).log, live);
      }
      namespaces.set(ns.name, ns);
      maybeIndex(ns);
    }
  }

  /** The namespace, created (and its descriptor written) on its first vector. */
  const getOrCreate = (name: string, dimensions: number): { ns: Namespace; created?: Promise<void> } => {
    const existing = namespaces.get(name);
    if (existing) {
      if (existing.matrix.dimensions !== dimensions) {
        throw PlatformError.invalid(`Vector of ${dimensions} dimensions for namespace ${name} of ${existing.matrix.dimensions} dimensions`);
      }
      return { ns: existing };
    }
    const ns: Namespace = { name, matrix: new VectorMatrix(dimensions), hnsw: undefined, writes: Promise.resolve() };
    namespaces.set(name, ns);
    if (!dir) return { ns };
    return { ns, created: onDisk(name, () => writeFile(paths(name).meta, JSON.stringify({ namespace: name, dimensions }))) };
  };

  let closed = false;
  return {
    async upsert(name, records: readonly VectorRecord[]) {
      const first = records[0];
      if (!first) return;
      const dimensions = first.vector.length;
      for (const r of records) {
        if (r.vector.length !== dimensions) throw PlatformError.invalid(`Vector ${r.id} has ${r.vector.length} dimensions, ${first.id} ${dimensions}`);
      }
      const { ns, created } = getOrCreate(name, dimensions);
      const log: LogRecord[] = records.map((r) => ({ op: 'upsert', id: r.id, documentId: r.documentId, vector: r.vector }));
      await Promise.all([created, write(ns, () => log)]);
    },

    async query(name, query): Promise<VectorHit[]> {
      const ns = namespaces.get(name);
      // At most one hit per vector (and no heap larger than the namespace for a huge topK).
      const k = ns ? Math.min(Math.floor(query.topK), ns.matrix.count) : 0;
      if (!ns || !(k > 0)) return [];
      const { matrix } = ns;
      if (query.vector.length !== matrix.dimensions) {
        throw PlatformError.invalid(`Query vector of ${query.vector.length} dimensions for namespace ${name} of ${matrix.dimensions} dimensions`);
      }
      let filter: Set<number> | undefined;
      if (query.documentIds) {
        filter = new Set(query.documentIds.map((d) => matrix.documentIndex(d)).filter((d): d is number => d !== undefined));
        if (filter.size === 0) return [];
      }
      let hits: { row: number; score: number }[];
      if (ns.hnsw?.ready && !filter) {
        hits = ns.hnsw.search(query.vector, k).flatMap(({ label, score }) => {
          const row = matrix.rowOfLabel.get(label);
          return row === undefined ? [] : [{ row, score }];
        });
      } else {
        hits = matrix.search(query.vector, k, filter).sorted();
      }
      return hits.map(({ row, score }) => ({
        id: matrix.ids[row] as string,
        documentId: matrix.documents[matrix.docOf[row] as number] as string,
        score,
        ...(query.includeVectors ? { vector: matrix.row(row) } : {}),
      }));
    },

    async deleteDocument(name, documentId) {
      const ns = namespaces.get(name);
      if (!ns) return 0;
      const log = await write(ns, () => ns.matrix.idsOfDocument(documentId).map((id): LogRecord => ({ op: 'delete', id })));
      return log.length;
    },

    async pruneDocument(name, documentId, keep) {
      const ns = namespaces.get(name);
      if (!ns) return 0;
      const kept = new Set(keep);
      const log = await write(ns, () =>
        ns.matrix
          .idsOfDocument(documentId)
          .filter((id) => !kept.has(id))
          .map((id): LogRecord => ({ op: 'delete', id })),
      );
      return log.length;
    },

    async dropNamespace(name) {
      namespaces.get(name)?.hnsw?.stop();
      namespaces.delete(name);
      if (!dir) return;
      const { log, meta } = paths(name);
      await onDisk(name, async () => {
        await appenders.get(name)?.close();
        appenders.delete(name);
        await rm(meta, { force: true });
        await removeLog(log);
      });
    },

    async count(name) {
      return namespaces.get(name)?.matrix.count ?? 0;
    },

    isApproximate(name) {
      return namespaces.get(name)?.hnsw?.ready === true;
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const ns of namespaces.values()) ns.hnsw?.stop();
      namespaces.clear();
      await Promise.all(disk.values());
      await Promise.all([...appenders.values()].map((a) => a.close()));
      appenders.clear();
    },
  };
}
