import { createHash } from 'node:crypto';
import { type ByteLimit, DEFAULT_UPSTREAM_LIMITS, PlatformError, type VectorHit, type VectorQuery, type VectorRecord, type VectorStore } from '@agent-platform/core';
import { createCoalescer } from '@agent-platform/core/internal';
import { ChromaClient, type Collection, type Where } from 'chromadb';
import type { FetchFunction } from '../fetch.js';
import { type ChromaConfig, parseChromaConfig } from './config.js';
import { createFetch, type ErrorContext, toPlatformError } from './errors.js';

export { type ChromaConfig, parseChromaConfig } from './config.js';

export interface ChromaVectorStoreOptions {
  /** Limit of each HTTP request to Chroma, in milliseconds. Default 10,000. */
  readonly timeoutMs?: number;
  /** The fetch of every request to Chroma (the platform's guarded fetch), given to the client's HTTP client. Default: the global fetch. */
  readonly fetch?: FetchFunction;
  /**
   * Most bytes of one answer of Chroma, enforced while reading: past it Chroma is cut off and
   * the call fails with `upstream_error` naming `setting`. Default 16 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes`).
   */
  readonly answerLimit?: ByteLimit;
}

/**
 * Records per upsert request, or the server's pre-flight `max_batch_size` if smaller (Chroma's
 * local server takes 5,461): 1,000 vectors of 512 dimensions are ~2.7 MB of base64 per request.
 */
const UPSERT_BATCH = 1000;
/** Ids per page when counting or collecting a document's vectors. */
const PAGE = 10_000;
/** A namespace no vector has: the dimension probe of `check` must match nothing. */
const PROBE_NAMESPACE = '\u0000agent-platform-check';

/** What each vector carries in Chroma, next to its embedding. */
interface VectorMetadata {
  readonly namespace: string;
  readonly documentId: string;
  readonly chunkId: string;
  [key: string]: string;
}

/** One vector as an upsert request carries it. */
interface ChromaRow {
  readonly id: string;
  readonly embedding: number[];
  readonly metadata: VectorMetadata;
}

/**
 * A `VectorStore` on a Chroma server (chromadb 3.5 client), all namespaces in the one
 * collection `indexName`, created on first use with cosine distance (`configuration.hnsw.space`).
 *
 * - Each vector's id is `<first 16 hex of sha256(namespace)>:<chunk id>` (chunk ids repeat across
 *   projects); its metadata is `{ namespace, documentId, chunkId }`, and every read, count and
 *   delete filters on `namespace` (`where`).
 * - Score: Chroma's cosine distance is d = 1 - cos, so `score = 1 - d` (-1..1).
 * - The dimension is fixed by Chroma at the first insert; a vector of another length is refused by
 *   it and reported as `Invalid vectorstore configuration: index "x" has dimension 768, the
 *   embedding model gives 512`.
 * - Nothing is kept that a restart of Chroma would invalidate, except the collection's id, which
 *   is looked up again (by name) when Chroma no longer knows it.
 * - Upserts made while another is in flight are sent together in the next request (of any
 *   namespaces, at most 1,000 vectors, no id twice); each resolves once its vectors are written.
 *
 * @example
 * const store = createChromaVectorStore({ endpoint: 'http://127.0.0.1:8000', indexName: 'agent-platform' });
 * await store.check?.({ dimensions: 512 });
 * await store.upsert('proj_1:builtin:use-lite-512', [{ id: 'c1', documentId: 'doc_1', vector }]);
 */
export function createChromaVectorStore(config: unknown, options: ChromaVectorStoreOptions = {}): VectorStore {
  const cfg: ChromaConfig = parseChromaConfig(config);
  const url = new URL(cfg.endpoint);
  const ssl = url.protocol === 'https:';
  const tenant = cfg.tenant ?? 'default_tenant';
  const database = cfg.database ?? 'default_database';
  const ctx: ErrorContext = {
    endpoint: url.origin,
    indexName: cfg.indexName,
    tenant,
    database,
    hasApiKey: cfg.apiKey !== undefined,
    timeoutMs: options.timeoutMs ?? 10_000,
    answerLimit: options.answerLimit ?? { bytes: DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes, setting: 'the answerLimit option of the store' },
  };
  const client = new ChromaClient({
    host: url.hostname,
    port: url.port ? Number(url.port) : ssl ? 443 : 80,
    ssl,
    tenant,
    database,
    headers: cfg.apiKey === undefined ? {} : { 'x-chroma-token': cfg.apiKey },
  });
  // chromadb 3.5 offers no per-request timeout and drops the HTTP status of errors: give its HTTP
  // client (hey-api's, whose `fetch` option is public) our fetch, which makes each request with
  // `options.fetch`. Without that option (another client version), the client's own errors are
  // mapped by name and requests have no timeout; but a given fetch must be used: refuse then.
  const http = (client as unknown as { apiClient?: { setConfig?: (config: { fetch: unknown }) => unknown } }).apiClient;
  if (typeof http?.setConfig === 'function') http.setConfig({ fetch: createFetch(ctx, options.fetch) });
  else if (options.fetch) throw new PlatformError('internal', 'This chromadb client takes no fetch: its requests cannot go through the outbound policy');

  let closed = false;
  let opened: Promise<Collection> | undefined;
  const prefixes = new Map<string, string>();
  const prefixOf = (namespace: string) => {
    let prefix = prefixes.get(namespace);
    if (prefix === undefined) {
      prefix = `${createHash('sha256').update(namespace).digest('hex').slice(0, 16)}:`;
      if (prefixes.size > 10_000) prefixes.clear();
      prefixes.set(namespace, prefix);
    }
    return prefix;
  };

  const verified = (collection: Collection): Collection => {
    const space = collection.configuration?.hnsw?.space ?? collection.configuration?.spann?.space ?? collection.metadata?.['hnsw:space'] ?? 'l2';
    if (space !== 'cosine') {
      throw PlatformError.invalid(`Invalid vectorstore configuration: index "${cfg.indexName}" uses ${String(space)} distance, the adapter needs cosine`);
    }
    return collection;
  };

  /** The collection: created when `create`, else undefined while it does not exist. */
  const open = async (create: boolean): Promise<Collection | undefined> => {
    if (opened) return opened;
    if (create) {
      const pending = client.getOrCreateCollection({ name: cfg.indexName, embeddingFunction: null, configuration: { hnsw: { space: 'cosine' } } }).then(verified);
      opened = pending;
      pending.catch(() => {
        if (opened === pending) opened = undefined;
      });
      return pending;
    }
    try {
      const collection = verified(await client.getCollection({ name: cfg.indexName }));
      opened ??= Promise.resolve(collection);
      return collection;
    } catch (error) {
      if (toPlatformError(ctx, error).code === 'not_found') return undefined;
      throw error;
    }
  };

  /**
   * Runs `fn` on the collection, with errors as PlatformErrors. When Chroma no longer knows the
   * collection (deleted behind our back), it is opened again once; reads of a missing collection
   * answer `missing`.
   */
  const withCollection = async <T>(create: boolean, missing: T, fn: (collection: Collection) => Promise<T>): Promise<T> => {
    if (closed) throw new PlatformError('internal', 'The chroma vector store is closed');
    try {
      for (let attempt = 0; ; attempt++) {
        const collection = await open(create);
        if (!collection) return missing;
        try {
          return await fn(collection);
        } catch (error) {
          if (attempt > 0 || toPlatformError(ctx, error).code !== 'not_found') throw error;
          if (opened && (await opened.catch(() => undefined)) === collection) opened = undefined;
        }
      }
    } catch (error) {
      throw toPlatformError(ctx, error);
    }
  };

  /** How many vectors match `where` (their ids, page by page: Chroma has no filtered count). */
  const countWhere = async (collection: Collection, where: Where): Promise<number> => {
    let total = 0;
    for (let offset = 0; ; offset += PAGE) {
      const { ids } = await collection.get({ where, include: [], limit: PAGE, offset });
      total += ids.length;
      if (ids.length < PAGE) return total;
    }
  };

  /** Writes rows (of any namespaces: ids and metadata carry theirs) in requests of at most Chroma's batch size. */
  const write = (rows: readonly ChromaRow[]) =>
    withCollection(true, undefined, async (collection) => {
      // Asked once per client (it caches the pre-flight answer); -1 when the server does not say.
      const max = await client.getMaxBatchSize();
      const size = max > 0 ? Math.min(UPSERT_BATCH, max) : UPSERT_BATCH;
      for (let i = 0; i < rows.length; i += size) {
        const batch = rows.slice(i, i + size);
        await collection.upsert({ ids: batch.map((r) => r.id), embeddings: batch.map((r) => r.embedding), metadatas: batch.map((r) => r.metadata) });
      }
    });
  // Upserts that callers make while one is in flight go to Chroma together, in one request (the
  // documents being indexed at once each write their few vectors: one request per vector capped
  // ingest at ~20-25 vectors/s on 2 loaded cores, 16 per request made ~180-220/s,
  // docs/BENCHMARKS.md, storage). A request never holds one id twice (Chroma refuses it) nor more
  // than UPSERT_BATCH rows made of several upserts; when a shared request fails, each upsert of it
  // is sent again alone, so each caller gets its own outcome.
  const upserts = createCoalescer<{ readonly rows: readonly ChromaRow[]; readonly ids: ReadonlySet<string> }>(
    async (batch) => {
      try {
        await write(batch.flatMap((u) => u.rows));
        return undefined;
      } catch (error) {
        if (batch.length === 1) throw error;
        return Promise.all(
          batch.map((u) =>
            write(u.rows).then(
              () => undefined,
              (own: unknown) => own,
            ),
          ),
        );
      }
    },
    (batch, next) => batch.reduce((n, u) => n + u.rows.length, next.rows.length) <= UPSERT_BATCH && !batch.some((u) => u.rows.some((r) => next.ids.has(r.id))),
  );

  return {
    async upsert(namespace: string, records: readonly VectorRecord[]) {
      const first = records[0];
      if (!first) return;
      for (const r of records) {
        if (r.vector.length !== first.vector.length) {
          throw PlatformError.invalid(`Vector ${r.id} has ${r.vector.length} dimensions, ${first.id} ${first.vector.length}`);
        }
      }
      const prefix = prefixOf(namespace);
      const rows = records.map((r): ChromaRow => ({ id: prefix + r.id, embedding: Array.from(r.vector), metadata: { namespace, documentId: r.documentId, chunkId: r.id } }));
      await upserts.add({ rows, ids: new Set(rows.map((r) => r.id)) });
    },

    async query(namespace: string, query: VectorQuery): Promise<VectorHit[]> {
      const k = Math.floor(query.topK);
      if (!(k > 0) || query.documentIds?.length === 0) return [];
      const where: Where = query.documentIds ? { $and: [{ namespace }, { documentId: { $in: [...query.documentIds] } }] } : { namespace };
      const result = await withCollection(false, undefined, (collection) =>
        collection.query<VectorMetadata>({
          queryEmbeddings: [Array.from(query.vector)],
          nResults: k,
          where,
          include: query.includeVectors ? ['metadatas', 'distances', 'embeddings'] : ['metadatas', 'distances'],
        }),
      );
      if (!result) return [];
      const ids = result.ids[0] ?? [];
      const prefix = prefixOf(namespace);
      return ids.map((id, i) => {
        const metadata = result.metadatas[0]?.[i];
        const vector = result.embeddings[0]?.[i];
        return {
          id: metadata?.chunkId ?? id.slice(prefix.length),
          documentId: metadata?.documentId ?? '',
          // Chroma's cosine distance is 1 - cos.
          score: 1 - (result.distances[0]?.[i] ?? 1),
          ...(query.includeVectors && vector ? { vector: Float32Array.from(vector) } : {}),
        };
      });
    },

    deleteDocument(namespace: string, documentId: string) {
      return withCollection(false, 0, async (collection) => {
        const where: Where = { $and: [{ namespace }, { documentId }] };
        // Chroma's local server answers `deleted: 0` whatever it removed: count first.
        const count = await countWhere(collection, where);
        if (count > 0) await collection.delete({ where });
        return count;
      });
    },

    pruneDocument(namespace: string, documentId: string, keep: readonly string[]) {
      return withCollection(false, 0, async (collection) => {
        // Chroma refuses an empty `$nin`: keeping nothing is deleting the document's vectors.
        const where: Where = { $and: [{ namespace }, { documentId }, ...(keep.length > 0 ? [{ chunkId: { $nin: [...keep] } }] : [])] };
        const count = await countWhere(collection, where);
        if (count > 0) await collection.delete({ where });
        return count;
      });
    },

    async dropNamespace(namespace: string) {
      await withCollection(false, undefined, async (collection) => {
        await collection.delete({ where: { namespace } });
      });
    },

    count(namespace: string) {
      return withCollection(false, 0, (collection) => countWhere(collection, { namespace }));
    },

    async check({ dimensions, signal }: { readonly dimensions: number; readonly signal?: AbortSignal }) {
      const abortedError = () => new PlatformError('aborted', 'The check of the chroma vector store was aborted');
      if (signal?.aborted) throw abortedError();
      const probe = new Array<number>(dimensions).fill(0);
      probe[0] = 1;
      // Chroma checks a query's dimension against the collection's (also once it is emptied).
      const checked = withCollection(true, undefined, async (collection) => {
        await collection.query({ queryEmbeddings: [probe], nResults: 1, where: { namespace: PROBE_NAMESPACE }, include: [] });
      });
      if (!signal) return checked;
      let onAbort = () => {};
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(abortedError());
        signal.addEventListener('abort', onAbort, { once: true });
      });
      checked.catch(() => {});
      try {
        await Promise.race([checked, aborted]);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    },

    async close() {
      // The client holds nothing but configuration (requests share Node's connection pool).
      closed = true;
      opened = undefined;
      prefixes.clear();
    },
  };
}
