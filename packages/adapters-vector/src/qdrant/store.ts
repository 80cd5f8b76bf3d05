import { createHash } from 'node:crypto';
import { type ByteLimit, PlatformError, type VectorHit, type VectorQuery, type VectorRecord, type VectorStore } from '@agent-platform/core';
import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { defaultAnswerLimit, type FetchFunction, storeFetch, withGlobalFetch } from '../fetch.js';
import { parseQdrantConfig } from './config.js';
import { type ErrorContext, isConflict, isNotFound, toPlatformError } from './errors.js';

export interface QdrantVectorStoreOptions {
  /** Limit of each HTTP request to Qdrant, in milliseconds. Default 10,000. */
  readonly timeoutMs?: number;
  /**
   * The fetch of every request to Qdrant (the platform's guarded fetch). Qdrant's client calls
   * the global fetch and takes none of its own: the store runs each of its calls with this one
   * as the global fetch of the call (`withGlobalFetch`). Default: the global fetch.
   */
  readonly fetch?: FetchFunction;
  /**
   * Most bytes of one answer of Qdrant, enforced while reading: past it Qdrant is cut off and
   * the call fails with `upstream_error` naming `setting`. Default 16 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes`).
   */
  readonly answerLimit?: ByteLimit;
}

/** A `VectorStore` on one Qdrant collection (`indexName`) shared by every namespace. */
export interface QdrantVectorStore extends VectorStore {
  readonly provider: 'qdrant';
  /** The collection. */
  readonly indexName: string;
  check(options: { readonly dimensions: number; readonly signal?: AbortSignal }): Promise<void>;
}

/** Payload keys of every point. `namespace` and `documentId` have keyword indexes. */
const NAMESPACE = 'namespace';
const DOCUMENT = 'documentId';
const CHUNK = 'chunkId';

/**
 * Payload indexes made with the collection (or added when missing): Qdrant filters faster on
 * indexed keys, and `is_tenant` (Qdrant ≥ 1.11) keeps each namespace's points together, as its
 * multitenancy guide recommends for a tenant key.
 */
const PAYLOAD_INDEXES: readonly [string, Schemas['PayloadFieldSchema']][] = [
  [NAMESPACE, { type: 'keyword', is_tenant: true }],
  [DOCUMENT, 'keyword'],
];

/**
 * Points per upsert request: at most 500 and about 8 MB of JSON (≈ 20 bytes per number plus the
 * payload), well under Qdrant's default request limit of 32 MB (`service.max_request_size_mb`).
 * 500 for 512 dimensions, 258 for 1536, 129 for 3072.
 */
export const upsertBatchSize = (dimensions: number): number => Math.max(1, Math.min(500, Math.floor(8_000_000 / (dimensions * 20 + 300))));

/**
 * The point id of a chunk: Qdrant takes only unsigned integers and UUIDs, so a UUID made from
 * sha256(namespace + '\0' + chunkId) (version 8, "custom", of RFC 9562). Deterministic, so an
 * upsert of the same chunk replaces its point; the chunk id itself is kept in the payload.
 */
export function qdrantPointId(namespace: string, chunkId: string): string {
  const bytes = createHash('sha256').update(`${namespace}\0${chunkId}`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The port written in the endpoint, even the scheme's default one (which `URL` drops). Read
 * from the text as the URL parser sees it: without the spaces and C0 controls around it and
 * the tabs and newlines inside it (`URL` removes them too).
 */
function explicitPort(endpoint: string): number | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the URL parser strips exactly these (C0 controls and space) around a URL.
  const text = endpoint.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const port = /^[a-z][a-z0-9+.-]*:[\\/]*(?:[^@/\\?#]*@)?(?:\[[^\]]*\]|[^/\\?#:]*)(?::(\d+))?/i.exec(text)?.[1];
  return port ? Number(port) : undefined;
}

/** Runs `start()`, rejecting as `aborted` when `signal` fires first (the call itself runs on, bounded by its timeout). */
function abortable<T>(start: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  const aborted = () => new PlatformError('aborted', 'The check of the Qdrant vector store was aborted');
  if (signal?.aborted) return Promise.reject(aborted());
  const promise = start();
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A vector store on Qdrant through its official REST client. `config` is the project's
 * `vectorStoreConfig` (see {@link parseQdrantConfig}); it is validated here, without a
 * connection: `check()` connects.
 *
 * One collection (`indexName`, created on the first upsert or `check` with the vectors'
 * dimension and cosine distance) holds every namespace; each point carries `namespace`,
 * `documentId` and `chunkId` in its payload and every read, count and delete filters on
 * `namespace`. Scores: Qdrant's cosine score is the cosine similarity itself, so
 * `score = qdrantScore` (clamped to -1..1 against rounding).
 *
 * @example
 * const store = createQdrantVectorStore({ indexName: 'agent-platform', endpoint: 'http://127.0.0.1:6333' });
 * await store.check({ dimensions: 512 });
 * await store.upsert('proj_1:builtin:use-lite-512', [{ id: 'c1', documentId: 'doc_1', vector }]);
 */
export function createQdrantVectorStore(config: unknown, options: QdrantVectorStoreOptions = {}): QdrantVectorStore {
  const { indexName, endpoint, apiKey } = parseQdrantConfig(config);
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw PlatformError.invalid('timeoutMs must be a positive number');
  const url = new URL(endpoint);
  const prefix = url.pathname.replace(/\/+$/, '');
  const client = new QdrantClient({
    url: url.origin,
    // Like Qdrant's own clients, an endpoint without a port means 6333.
    port: explicitPort(endpoint) ?? 6333,
    ...(prefix ? { prefix } : {}),
    ...(apiKey ? { apiKey } : {}),
    timeout: timeoutMs,
    // Its version probe is a request at construction that only logs: `check()` connects instead.
    checkCompatibility: false,
  });
  const ctx: ErrorContext = { endpoint: endpoint.replace(/\/+$/, ''), timeoutMs, hasApiKey: apiKey !== undefined, indexName };
  const fetch = storeFetch(options.fetch, options.answerLimit ?? defaultAnswerLimit(), `Qdrant at ${ctx.endpoint}`);

  let closed = false;
  /** Dimension of the collection once it was seen (or made) with cosine distance. */
  let dimension: number | undefined;
  let preparing: Promise<number> | undefined;

  const mismatch = (actual: number, wanted: number) => PlatformError.invalid(`Invalid vectorstore configuration: index "${indexName}" has dimension ${actual}, the embedding model gives ${wanted}`);

  const describeCollection = async () => {
    try {
      return await client.getCollection(indexName);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };

  /** The dimension of a collection this store can use, or a `PlatformError` saying why not. */
  const verify = (info: Schemas['CollectionInfo']): number => {
    const vectors = info.config.params.vectors;
    if (!vectors || typeof vectors.size !== 'number' || typeof vectors.distance !== 'string') {
      throw PlatformError.invalid(`Invalid vectorstore configuration: index "${indexName}" has named vectors; it needs one unnamed vector`);
    }
    if (vectors.distance !== 'Cosine') {
      throw PlatformError.invalid(`Invalid vectorstore configuration: index "${indexName}" uses ${vectors.distance} distance, cosine is required`);
    }
    return vectors.size;
  };

  /** Finds or creates the collection (and its payload indexes); answers its dimension. */
  const prepare = async (dimensions: number): Promise<number> => {
    let info = await describeCollection();
    if (!info) {
      try {
        await client.createCollection(indexName, { vectors: { size: dimensions, distance: 'Cosine' } });
      } catch (error) {
        // Another instance made it meanwhile: use it if it fits.
        if (!isConflict(error)) throw error;
      }
      info = await describeCollection();
      if (!info) throw new PlatformError('upstream_error', `Qdrant did not keep the collection "${indexName}"`, { retryable: true });
    }
    const size = verify(info);
    const indexed = info.payload_schema ?? {};
    for (const [field, schema] of PAYLOAD_INDEXES) {
      if (!indexed[field]) await client.createPayloadIndex(indexName, { field_name: field, field_schema: schema, wait: true });
    }
    return size;
  };

  /** Makes sure the collection exists with `dimensions`, once per store (again after a 404). */
  const ensure = async (dimensions: number): Promise<void> => {
    if (dimension === undefined) {
      preparing ??= prepare(dimensions).finally(() => {
        preparing = undefined;
      });
      dimension = await preparing;
    }
    if (dimension !== dimensions) throw mismatch(dimension, dimensions);
  };

  /** Runs Qdrant calls; maps failures; answers `onMissing()` when the collection does not exist. */
  const run = async <T>(op: () => Promise<T>, onMissing?: () => T): Promise<T> => {
    if (closed) throw new PlatformError('unavailable', 'The Qdrant vector store was closed');
    try {
      return await withGlobalFetch(fetch, op);
    } catch (error) {
      if (isNotFound(error)) {
        dimension = undefined;
        if (onMissing) return onMissing();
      }
      throw toPlatformError(error, ctx);
    }
  };

  const inNamespace = (namespace: string): Schemas['Condition'] => ({ key: NAMESPACE, match: { value: namespace } });

  return {
    provider: 'qdrant',
    indexName,

    async check({ dimensions, signal }) {
      if (!Number.isInteger(dimensions) || dimensions < 1) throw PlatformError.invalid('dimensions must be a positive integer');
      await abortable(
        () =>
          run(async () => {
            // Always asks Qdrant (reachable, key accepted, collection as needed), even when known.
            const size = await prepare(dimensions);
            dimension = size;
            if (size !== dimensions) throw mismatch(size, dimensions);
          }),
        signal,
      );
    },

    async upsert(namespace, records: readonly VectorRecord[]) {
      const first = records[0];
      if (!first) return;
      const dimensions = first.vector.length;
      for (const r of records) {
        if (r.vector.length !== dimensions) throw PlatformError.invalid(`Vector ${r.id} has ${r.vector.length} dimensions, ${first.id} ${dimensions}`);
      }
      const size = upsertBatchSize(dimensions);
      await run(async () => {
        await ensure(dimensions);
        for (let start = 0; start < records.length; start += size) {
          const points = records.slice(start, start + size).map((r) => ({
            id: qdrantPointId(namespace, r.id),
            vector: Array.from(r.vector),
            payload: { [NAMESPACE]: namespace, [DOCUMENT]: r.documentId, [CHUNK]: r.id },
          }));
          try {
            await client.upsert(indexName, { wait: true, points });
          } catch (error) {
            // The collection was deleted behind our back: make it again, once.
            if (!isNotFound(error)) throw error;
            dimension = undefined;
            await ensure(dimensions);
            await client.upsert(indexName, { wait: true, points });
          }
        }
      });
    },

    async query(namespace, query: VectorQuery): Promise<VectorHit[]> {
      const limit = Math.floor(query.topK);
      if (!(limit > 0) || query.documentIds?.length === 0) return [];
      if (dimension !== undefined && query.vector.length !== dimension) {
        throw PlatformError.invalid(`Query vector of ${query.vector.length} dimensions for index "${indexName}" of ${dimension} dimensions`);
      }
      const must = [inNamespace(namespace)];
      if (query.documentIds) must.push({ key: DOCUMENT, match: { any: [...query.documentIds] } });
      const includeVectors = query.includeVectors === true;
      const { points } = await run(
        () =>
          client.query(indexName, {
            query: Array.from(query.vector),
            filter: { must },
            limit,
            with_payload: [DOCUMENT, CHUNK],
            with_vector: includeVectors,
          }),
        () => ({ points: [] }),
      );
      return points.flatMap((point): VectorHit[] => {
        const id = point.payload?.[CHUNK];
        const documentId = point.payload?.[DOCUMENT];
        if (typeof id !== 'string' || typeof documentId !== 'string') return [];
        const score = Math.max(-1, Math.min(1, point.score));
        if (!includeVectors) return [{ id, documentId, score }];
        const vector = Array.isArray(point.vector) ? Float32Array.from(point.vector as number[]) : undefined;
        return [vector ? { id, documentId, score, vector } : { id, documentId, score }];
      });
    },

    async deleteDocument(namespace, documentId) {
      const filter = { must: [inNamespace(namespace), { key: DOCUMENT, match: { value: documentId } }] };
      // Qdrant's delete does not say how many points went: count them first (exact).
      return run(
        async () => {
          const { count } = await client.count(indexName, { filter, exact: true });
          if (count > 0) await client.delete(indexName, { wait: true, filter });
          return count;
        },
        () => 0,
      );
    },

    async pruneDocument(namespace, documentId, keep) {
      const must = [inNamespace(namespace), { key: DOCUMENT, match: { value: documentId } }, ...(keep.length > 0 ? [{ key: CHUNK, match: { except: [...keep] } }] : [])];
      const filter = { must };
      return run(
        async () => {
          const { count } = await client.count(indexName, { filter, exact: true });
          if (count > 0) await client.delete(indexName, { wait: true, filter });
          return count;
        },
        () => 0,
      );
    },

    async dropNamespace(namespace) {
      await run(
        () => client.delete(indexName, { wait: true, filter: { must: [inNamespace(namespace)] } }),
        () => undefined,
      );
    },

    async count(namespace) {
      const { count } = await run(
        () => client.count(indexName, { filter: { must: [inNamespace(namespace)] }, exact: true }),
        () => ({ count: 0 }),
      );
      return count;
    },

    async close() {
      // The client keeps no state to flush; its idle keep-alive sockets are unref'd by undici.
      closed = true;
    },
  };
}
