import { setTimeout as sleep } from 'node:timers/promises';
import { type ByteLimit, DEFAULT_UPSTREAM_LIMITS, PlatformError, type VectorHit, type VectorQuery, type VectorRecord, type VectorStore } from '@agent-platform/core';
import { type Index, type IndexModel, Pinecone, type PineconeRecord } from '@pinecone-database/pinecone';
import type { FetchFunction } from '../fetch.js';
import { parsePineconeConfig } from './config.js';
import { type ChunkMetadata, documentPrefix, pineconeNamespace, recordId } from './ids.js';
import { type CallContext, pineconeFetch, toPlatformError, withCall } from './transport.js';

export { DEFAULT_PINECONE_ENDPOINT, type PineconeConfig, parsePineconeConfig } from './config.js';

export interface PineconeVectorStoreOptions {
  /** Limit of each HTTP request, in milliseconds. Default 10,000. */
  readonly timeoutMs?: number;
  /** How long a newly created index may take to become ready, in milliseconds. Default 120,000. */
  readonly readyTimeoutMs?: number;
  /** The fetch of every request (the platform's guarded fetch), given to the client as `fetchApi`. Default: the global fetch. */
  readonly fetch?: FetchFunction;
  /**
   * Most bytes of one answer of Pinecone, enforced while reading: past it Pinecone is cut off and
   * the call fails with `upstream_error` naming `setting`. Default 16 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes`).
   */
  readonly answerLimit?: ByteLimit;
}

/** Pinecone's limits per upsert request: 1,000 vectors or 2 MB; we stay a little under the bytes. */
const UPSERT_MAX_RECORDS = 1000;
const UPSERT_MAX_BYTES = 2 * 1024 * 1024 - 64 * 1024;
/** Ids per delete request (Pinecone takes 1,000). */
const DELETE_MAX_IDS = 1000;
/** Ids per page of `list` (Pinecone's default and maximum page). */
const LIST_PAGE = 100;
/** Pinecone's largest `topK` when metadata or values are returned. */
const QUERY_MAX_TOP_K = 1000;
/** Where a missing index is created: serverless, Pinecone's default cloud and region. */
const SERVERLESS_SPEC = { serverless: { cloud: 'aws', region: 'us-east-1' } } as const;

/** A Pinecone store always has `check`. */
export type PineconeVectorStore = VectorStore & Required<Pick<VectorStore, 'check'>>;

interface Target {
  readonly index: Index<ChunkMetadata>;
  readonly dimension: number;
}

/** Upsert requests within Pinecone's limits (by count and by JSON size). */
function* batches(records: readonly PineconeRecord<ChunkMetadata>[]): Generator<PineconeRecord<ChunkMetadata>[]> {
  let batch: PineconeRecord<ChunkMetadata>[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = Buffer.byteLength(JSON.stringify(record)) + 1;
    if (batch.length > 0 && (batch.length === UPSERT_MAX_RECORDS || bytes + size > UPSERT_MAX_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(record);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/**
 * A `VectorStore` on one Pinecone serverless index (`indexName`), through the official client.
 * Each of our namespaces is a Pinecone namespace of that index; vector ids are
 * `<documentId>#<chunkId>` with both ids in the metadata. The index is created on first write
 * (or `check`) with the vectors' dimension and the cosine metric, and used once it is ready; an
 * existing index of another dimension or metric is refused as a configuration error.
 *
 * Scores: with the cosine metric Pinecone's score is the cosine similarity itself (-1..1), so
 * `VectorHit.score = score`.
 *
 * Pinecone is eventually consistent: on the real service a write may take a few seconds to show
 * in queries and counts.
 *
 * @example
 * const store = createPineconeVectorStore({ indexName: 'agent-platform', apiKey: process.env.PINECONE_API_KEY });
 * await store.check?.({ dimensions: 512 });
 * await store.upsert('proj_1:builtin:use-lite-512', [{ id: 'chunk_1', documentId: 'doc_1', vector }]);
 */
export function createPineconeVectorStore(config: unknown, options: PineconeVectorStoreOptions = {}): PineconeVectorStore {
  const { indexName, apiKey, endpoint } = parsePineconeConfig(config);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  let client: Pinecone | undefined = new Pinecone({
    apiKey,
    controllerHostUrl: endpoint,
    fetchApi: pineconeFetch(timeoutMs, options.answerLimit ?? { bytes: DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes, setting: 'the answerLimit option of the store' }, options.fetch),
    maxRetries: 3,
  });
  const closing = new AbortController();
  /** The index once it was found ready; forgotten after a failure, so a later call looks again. */
  let target: Target | undefined;

  const mismatch = (actual: number, wanted: number) => PlatformError.invalid(`Invalid vectorstore configuration: index "${indexName}" has dimension ${actual}, the embedding model gives ${wanted}`);

  /** Runs one store operation with its own call context and maps what it throws. */
  async function call<T>(fn: (context: CallContext, pc: Pinecone) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (!client) throw new PlatformError('internal', 'The pinecone vector store is closed');
    const pc = client;
    const context: CallContext = { signal: signal ? AbortSignal.any([signal, closing.signal]) : closing.signal };
    try {
      return await withCall(context, () => fn(context, pc));
    } catch (error) {
      const mapped = toPlatformError(error, context, endpoint, timeoutMs, apiKey);
      if (mapped.code !== 'invalid_request') target = undefined;
      throw mapped;
    }
  }

  /** Runs a request whose 404 means "nothing there" (a missing index or namespace). */
  async function unlessNotFound<T>(context: CallContext, request: () => Promise<T>): Promise<T | undefined> {
    try {
      return await request();
    } catch (error) {
      if (context.failure?.status !== 404) throw error;
      context.failure = undefined;
      return undefined;
    }
  }

  async function waitUntilReady(context: CallContext, pc: Pinecone, model: IndexModel): Promise<IndexModel> {
    const deadline = Date.now() + readyTimeoutMs;
    let delay = 100;
    let current: IndexModel | undefined = model;
    while (!current.status?.ready) {
      const state = current.status?.state ?? 'unknown';
      if (['InitializationFailed', 'Terminating', 'Disabled'].includes(state)) {
        throw new PlatformError('upstream_error', `pinecone index "${indexName}" is ${state}`);
      }
      if (Date.now() + delay > deadline) {
        throw new PlatformError('timeout', `pinecone index "${indexName}" was not ready within ${readyTimeoutMs} ms (state ${state})`, { retryable: true });
      }
      await sleep(delay, undefined, { signal: context.signal });
      delay = Math.min(delay * 2, 2000);
      current = await unlessNotFound(context, () => pc.describeIndex(indexName));
      if (!current) throw new PlatformError('upstream_error', `pinecone index "${indexName}" disappeared while it was being created`, { retryable: true });
    }
    return current;
  }

  /**
   * The index, ready. Missing: created with `dimensions` when given (a write or a check), else
   * undefined (a read finds nothing). An index of another metric or dimension is refused.
   */
  async function open(context: CallContext, pc: Pinecone, dimensions?: number): Promise<Target | undefined> {
    if (target) {
      if (dimensions !== undefined && target.dimension !== dimensions) throw mismatch(target.dimension, dimensions);
      return target;
    }
    let model = await unlessNotFound(context, () => pc.describeIndex(indexName));
    if (!model) {
      if (dimensions === undefined) return undefined;
      // A 409 means another instance created it meanwhile: use that one.
      await unlessConflict(context, () => pc.createIndex({ name: indexName, dimension: dimensions, metric: 'cosine', spec: SERVERLESS_SPEC }));
      model = await unlessNotFound(context, () => pc.describeIndex(indexName));
      if (!model) throw new PlatformError('upstream_error', `pinecone did not create index "${indexName}"`, { retryable: true });
    }
    if (model.metric !== 'cosine') {
      throw PlatformError.invalid(`Invalid vectorstore configuration: index "${indexName}" uses the ${model.metric} metric, the knowledge base needs cosine`);
    }
    if (!model.dimension) throw PlatformError.invalid(`Invalid vectorstore configuration: index "${indexName}" is not a dense vector index`);
    if (dimensions !== undefined && model.dimension !== dimensions) throw mismatch(model.dimension, dimensions);
    model = await waitUntilReady(context, pc, model);
    target = { index: pc.index<ChunkMetadata>({ name: indexName, host: model.host }), dimension: model.dimension as number };
    return target;
  }

  /** Deletes the document's vectors but those whose record ids are in `keep`; answers how many went. */
  function deleteOfDocument(namespace: string, documentId: string, keep: ReadonlySet<string>): Promise<number> {
    return call(async (context, pc) => {
      const found = await open(context, pc);
      if (!found) return 0;
      const ns = found.index.namespace(pineconeNamespace(namespace));
      const ids: string[] = [];
      let token: string | undefined;
      do {
        const prefix = documentPrefix(documentId);
        const page = await unlessNotFound(context, () => ns.listPaginated({ prefix, limit: LIST_PAGE, ...(token ? { paginationToken: token } : {}) }));
        for (const item of page?.vectors ?? []) if (item.id && !keep.has(item.id)) ids.push(item.id);
        token = page?.pagination?.next;
      } while (token);
      for (let start = 0; start < ids.length; start += DELETE_MAX_IDS) {
        await unlessNotFound(context, () => ns.deleteMany({ ids: ids.slice(start, start + DELETE_MAX_IDS) }));
      }
      return ids.length;
    });
  }

  async function unlessConflict(context: CallContext, request: () => Promise<unknown>): Promise<void> {
    try {
      await request();
    } catch (error) {
      if (context.failure?.status !== 409) throw error;
      context.failure = undefined;
    }
  }

  return {
    upsert(namespace: string, records: readonly VectorRecord[]) {
      const first = records[0];
      if (!first) return Promise.resolve();
      const dimensions = first.vector.length;
      for (const r of records) {
        if (r.vector.length !== dimensions) {
          return Promise.reject(PlatformError.invalid(`Vector ${r.id} has ${r.vector.length} dimensions, ${first.id} ${dimensions}`));
        }
      }
      const rows = records.map((r) => ({
        id: recordId(r.documentId, r.id),
        values: Array.from(r.vector),
        metadata: { documentId: r.documentId, chunkId: r.id },
      }));
      return call(async (context, pc) => {
        const ns = (await open(context, pc, dimensions))!.index.namespace(pineconeNamespace(namespace));
        // One batch after another: a failure is then reported with its own status and message.
        for (const batch of batches(rows)) await ns.upsert({ records: batch });
      });
    },

    query(namespace: string, query: VectorQuery): Promise<VectorHit[]> {
      const topK = Math.min(Math.floor(query.topK), QUERY_MAX_TOP_K);
      if (!(topK > 0) || query.documentIds?.length === 0) return Promise.resolve([]);
      return call(async (context, pc) => {
        const found = await open(context, pc);
        if (!found) return [];
        if (query.vector.length !== found.dimension) throw mismatch(found.dimension, query.vector.length);
        const answer = await found.index.namespace(pineconeNamespace(namespace)).query({
          topK,
          vector: Array.from(query.vector),
          includeMetadata: true,
          includeValues: query.includeVectors === true,
          ...(query.documentIds ? { filter: { documentId: { $in: [...query.documentIds] } } } : {}),
        });
        // With the cosine metric Pinecone's score is the cosine similarity: score = Pinecone's score.
        return answer.matches
          .map((match) => ({
            id: match.metadata?.chunkId ?? match.id,
            documentId: match.metadata?.documentId ?? '',
            score: match.score ?? 0,
            ...(query.includeVectors ? { vector: Float32Array.from(match.values ?? []) } : {}),
          }))
          .sort((a, b) => b.score - a.score);
      });
    },

    deleteDocument(namespace: string, documentId: string) {
      return deleteOfDocument(namespace, documentId, new Set());
    },

    pruneDocument(namespace: string, documentId: string, keep: readonly string[]) {
      return deleteOfDocument(namespace, documentId, new Set(keep.map((id) => recordId(documentId, id))));
    },

    dropNamespace(namespace: string) {
      return call(async (context, pc) => {
        const found = await open(context, pc);
        // Pinecone answers 404 for a namespace that does not exist: nothing to drop.
        if (found) await unlessNotFound(context, () => found.index.namespace(pineconeNamespace(namespace)).deleteAll());
      });
    },

    count(namespace: string) {
      return call(async (context, pc) => {
        const found = await open(context, pc);
        if (!found) return 0;
        const stats = await found.index.describeIndexStats();
        return stats.namespaces?.[pineconeNamespace(namespace)]?.recordCount ?? 0;
      });
    },

    check({ dimensions, signal }) {
      return call(async (context, pc) => {
        const found = (await open(context, pc, dimensions))!;
        // The data plane too: its host answers and takes the key.
        await found.index.describeIndexStats();
      }, signal);
    },

    async close() {
      if (!client) return;
      client = undefined;
      target = undefined;
      closing.abort();
    },
  };
}
