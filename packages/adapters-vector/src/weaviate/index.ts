import { type ByteLimit, PlatformError, type VectorHit, type VectorQuery, type VectorRecord, type VectorStore } from '@agent-platform/core';
import weaviate, { type Collection, Filters, type FilterValue, type WeaviateClient } from 'weaviate-client';
import { defaultAnswerLimit, type FetchFunction, storeFetch, withGlobalFetch } from '../fetch.js';
import { parseWeaviateConfig, type WeaviateConfig, weaviateConnection } from './config.js';
import { type ErrorContext, type GuardOptions, guarded, isAlreadyExists, isNotFound } from './errors.js';
import { chunkUuid, classDefinition, dimensionMismatch, lengthsInError, verifyClass } from './schema.js';

export { parseWeaviateConfig, type WeaviateConfig } from './config.js';

export interface WeaviateVectorStoreOptions {
  /** Deadline of each request to Weaviate, in ms. Default 10,000. */
  readonly timeoutMs?: number;
  /**
   * The platform's guarded fetch. REST: Weaviate's client calls the global fetch and takes none
   * of its own, so each store call runs with this one as the global fetch of the call
   * (`withGlobalFetch`). gRPC: `check` resolves and checks the gRPC address before each
   * connection; a plain (http) gRPC connection then goes to the checked IP address itself, and a
   * TLS one (https) to the host name, whose certificate the TLS handshake verifies (the gRPC
   * library resolves the name again: a later DNS answer can at most receive a TLS handshake
   * that fails, never a request). Default: the global fetch, and gRPC unchecked.
   */
  readonly fetch?: FetchFunction & { check(url: string): Promise<{ readonly addresses: readonly { readonly address: string; readonly family: 4 | 6 }[] }> };
  /**
   * Most bytes of one REST answer of Weaviate, enforced while reading: past it Weaviate is cut
   * off and the call fails with `upstream_error` naming `setting`. Default 16 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes`). gRPC answers are bounded by the client
   * itself (100 MB per message, checked on each message's declared length before it is read).
   */
  readonly answerLimit?: ByteLimit;
}

/** A connected client and the address its gRPC connection goes to. */
interface Connected {
  readonly client: WeaviateClient;
  readonly grpc: { readonly host: string; readonly port: number };
}

/** Objects per `BatchObjects` request, and at most this many bytes of vectors in one. */
const BATCH_OBJECTS = 200;
const BATCH_BYTES = 4 * 1024 * 1024;
/** Batch requests of one upsert in flight at once. */
const BATCH_CONCURRENCY = 4;
/** Weaviate's default QUERY_MAXIMUM_RESULTS: the most hits one search may ask for. */
const MAX_RESULTS = 10_000;
/**
 * The oldest Weaviate `check` accepts: from 1.29 the client counts over gRPC too (1.27–1.28 would
 * count over GraphQL, a path not exercised by the tests).
 */
const MIN_VERSION: readonly [number, number] = [1, 29];

/**
 * A `VectorStore` on Weaviate through the official `weaviate-client` v3 (REST for the schema and
 * meta, gRPC for search, batch writes, batch deletes and counts).
 *
 * One class (`indexName`) holds every namespace: each object carries `namespace`, `documentId`
 * and `chunkId` properties, its UUID is derived from namespace and chunk id, and every read,
 * count and delete is filtered by namespace. The class is created on first use (first upsert or
 * `check`) with cosine distance; an existing class with another metric or vector length is
 * refused with `invalid_request`.
 *
 * Scores: Weaviate answers the cosine distance d = 1 - cos, so score = 1 - d (cosine
 * similarity, -1..1).
 *
 * Errors: unreachable → `unavailable` (retryable), a request over `timeoutMs` → `timeout`, a
 * refused key → `invalid_request` "Invalid vectorstore configuration: Weaviate refused the API key
 * (401)", other answers → `upstream_error` with Weaviate's message. After a failure the client is
 * recreated on the next call, so a Weaviate that comes back needs no restart.
 *
 * @example
 * const store = createWeaviateVectorStore({ indexName: 'AgentPlatform', endpoint: 'http://127.0.0.1:8080' });
 * await store.check?.({ dimensions: 512 });
 * await store.upsert('proj_x:builtin:use-lite-512', [{ id: 'c1', documentId: 'd1', vector }]);
 */
export function createWeaviateVectorStore(config: unknown, options: WeaviateVectorStoreOptions = {}): VectorStore {
  const cfg: WeaviateConfig = parseWeaviateConfig(config);
  const conn = weaviateConnection(cfg);
  const { className } = conn;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const ctx: ErrorContext = { endpoint: cfg.endpoint, grpc: conn.grpc, timeoutMs, hasApiKey: cfg.apiKey !== undefined };
  const restFetch = storeFetch(options.fetch, options.answerLimit ?? defaultAnswerLimit(), `Weaviate at ${cfg.endpoint}`);
  // The client's own deadlines (seconds) sit just past ours, so ours answer first.
  const seconds = Math.ceil(timeoutMs / 1000) + 1;

  /** Where gRPC connects: the checked address (plain gRPC) or the checked name (TLS), see `options.fetch`. */
  const grpcTarget = async (): Promise<{ readonly host: string; readonly probe: string }> => {
    if (!options.fetch) return { host: conn.grpc.host, probe: conn.grpc.host };
    const { addresses } = await options.fetch.check(`${conn.grpc.secure ? 'https' : 'http'}://${conn.grpc.host}:${conn.grpc.port}/`);
    const first = addresses[0];
    if (!first) throw new PlatformError('unavailable', `Weaviate gRPC host ${conn.grpc.host} has no address`, { retryable: true });
    const literal = first.family === 6 ? `[${first.address}]` : first.address;
    return { host: conn.grpc.secure ? conn.grpc.host : literal, probe: first.address };
  };

  let client: Promise<Connected> | undefined;
  /** The gRPC address of the current client, once connected (the probe goes there and nowhere else). */
  let probeAt: { readonly host: string; readonly port: number } | undefined;
  const connect = async (): Promise<Connected> => {
    const grpcAt = await grpcTarget();
    const connected = await weaviate.connectToCustom({
      httpHost: conn.http.host,
      httpPort: conn.http.port,
      httpSecure: conn.http.secure,
      httpPath: conn.http.path,
      grpcHost: grpcAt.host,
      grpcPort: conn.grpc.port,
      grpcSecure: conn.grpc.secure,
      ...(cfg.apiKey === undefined ? {} : { authCredentials: new weaviate.ApiKey(cfg.apiKey) }),
      timeout: { init: seconds, query: seconds, insert: seconds },
      // No I/O when connecting: meta and gRPC health would be fetched here otherwise, and a
      // Weaviate that is down would make the store unusable until recreated.
      skipInitChecks: true,
    });
    probeAt = { host: grpcAt.probe, port: conn.grpc.port };
    return { client: connected, grpc: probeAt };
  };
  const dropClient = (dropped: Promise<Connected>) => {
    if (client === dropped) {
      client = undefined;
      probeAt = undefined;
    }
    dropped.then(({ client: c }) => c.close()).catch(() => {});
  };

  /** What is known of the class; forgotten after any failure (it may have been changed meanwhile). */
  let exists = false;
  let dimensions: number | undefined;
  let verifying: { readonly want: number; readonly promise: Promise<void> } | undefined;

  /** One request to Weaviate, guarded (deadline, signal, error mapping, probe for gRPC). */
  async function run<T>(fn: (c: WeaviateClient) => Promise<T>, guard: GuardOptions = {}): Promise<T> {
    if (!client) {
      const pending = connect();
      client = pending;
      // A failed connect (a refused or unresolvable gRPC address) is tried again by the next call.
      pending.catch(() => {
        if (client === pending) client = undefined;
      });
    }
    const current = client;
    try {
      return await guarded(
        current.then(({ client: c }) => withGlobalFetch(restFetch, () => fn(c))),
        ctx,
        guard,
      );
    } catch (error) {
      const code = (error as PlatformError).code;
      if (code === 'unavailable' || code === 'timeout') dropClient(current);
      if (code !== 'invalid_request' && code !== 'aborted') {
        exists = false;
        dimensions = undefined;
      }
      throw error;
    }
  }
  const grpc = (signal?: AbortSignal): GuardOptions => ({ grpc: () => probeAt, signal });
  const collection = (c: WeaviateClient): Collection => c.collections.use(className);

  /** The class's config, or undefined when there is no such class. */
  async function readClass(signal?: AbortSignal) {
    try {
      return await run((c) => c.collections.export(className), { signal });
    } catch (error) {
      if (isNotFound((error as PlatformError).cause)) return undefined;
      throw error;
    }
  }

  /** Whether the class exists (and has the right metric and properties). */
  async function classExists(): Promise<boolean> {
    if (exists) return true;
    const found = await readClass();
    if (found) verifyClass(found);
    exists = found !== undefined;
    return exists;
  }

  /** Creates the class if missing, verifies it, and learns (or claims) its vector length. */
  async function verify(want: number, signal?: AbortSignal): Promise<void> {
    let found = await readClass(signal);
    if (!found) {
      try {
        await run((c) => c.collections.createFromSchema(classDefinition(className)), { signal });
      } catch (error) {
        if (!isAlreadyExists((error as PlatformError).cause)) throw error;
      }
      found = await readClass(signal);
      if (!found) throw new PlatformError('upstream_error', `Weaviate did not keep the class "${className}" it created`);
    }
    verifyClass(found);
    exists = true;
    // The schema holds no vector length: a stored vector tells it (an empty class takes any).
    const sample = await run((c) => collection(c).query.fetchObjects({ limit: 1, includeVector: true, returnProperties: [] }), grpc(signal));
    const stored = sample.objects[0]?.vectors.default;
    const has = Array.isArray(stored) ? stored.length : undefined;
    if (has !== undefined && has !== want) throw dimensionMismatch(className, has, want);
    dimensions = want;
  }

  /** Ready to write vectors of `want` dimensions (concurrent writers share one verification). */
  async function writable(want: number): Promise<void> {
    for (;;) {
      if (dimensions === want && exists) return;
      if (dimensions !== undefined && exists) throw dimensionMismatch(className, dimensions, want);
      if (!verifying) {
        const promise = verify(want).finally(() => {
          if (verifying?.promise === promise) verifying = undefined;
        });
        verifying = { want, promise };
      }
      const current = verifying;
      try {
        await current.promise;
      } catch (error) {
        // A verification for another length failed: its verdict is not this writer's; look again.
        if (current.want === want) throw error;
      }
    }
  }

  const inNamespace = (c: Collection, namespace: string) => c.filter.byProperty('namespace').equal(namespace);

  async function writeBatch(namespace: string, batch: readonly VectorRecord[]): Promise<void> {
    const objects = batch.map((r) => ({
      id: chunkUuid(namespace, r.id),
      properties: { namespace, documentId: r.documentId, chunkId: r.id },
      vectors: Array.from(r.vector),
    }));
    const result = await run((c) => collection(c).data.insertMany(objects), grpc());
    if (!result.hasErrors) return;
    const errors = Object.values(result.errors);
    const first = errors[0]?.message ?? 'unknown error';
    dimensions = undefined;
    const lengths = lengthsInError(first);
    if (lengths) throw dimensionMismatch(className, lengths[0], lengths[1]);
    throw new PlatformError('upstream_error', `Weaviate refused ${errors.length} of ${batch.length} vectors: ${first}`);
  }

  /** Deletes what the filter matches, in as many calls as Weaviate's per-call limit needs. */
  async function deleteWhere(filter: (c: Collection) => FilterValue): Promise<number> {
    if (!(await classExists())) return 0;
    let total = 0;
    for (;;) {
      const result = await run((c) => {
        const coll = collection(c);
        return coll.data.deleteMany(filter(coll));
      }, grpc());
      if (result.failed > 0) throw new PlatformError('upstream_error', `Weaviate failed to delete ${result.failed} of ${result.matches} vectors`);
      total += result.successful;
      // One call removes at most QUERY_MAXIMUM_RESULTS objects: go on until nothing matches.
      if (result.matches === 0 || result.successful === 0) return total;
    }
  }

  return {
    async upsert(namespace, records) {
      const first = records[0];
      if (!first) return;
      const dims = first.vector.length;
      for (const r of records) {
        if (r.vector.length !== dims) throw PlatformError.invalid(`Vector ${r.id} has ${r.vector.length} dimensions, ${first.id} ${dims}`);
      }
      await writable(dims);
      // The last record of an id wins (batches run concurrently).
      const unique = [...new Map(records.map((r) => [r.id, r])).values()];
      const perBatch = Math.max(1, Math.min(BATCH_OBJECTS, Math.floor(BATCH_BYTES / (dims * 4 + 128))));
      const batches: VectorRecord[][] = [];
      for (let i = 0; i < unique.length; i += perBatch) batches.push(unique.slice(i, i + perBatch));
      let next = 0;
      let failed = false;
      const worker = async () => {
        try {
          while (!failed && next < batches.length) await writeBatch(namespace, batches[next++] as VectorRecord[]);
        } catch (error) {
          failed = true; // the other workers send no further batch
          throw error;
        }
      };
      await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, batches.length) }, worker));
    },

    async query(namespace, query: VectorQuery): Promise<VectorHit[]> {
      const limit = Math.min(Math.floor(query.topK), MAX_RESULTS);
      if (!(limit > 0) || query.documentIds?.length === 0) return [];
      if (!(await classExists())) return [];
      const includeVector = query.includeVectors === true;
      const result = await run((c) => {
        const coll = collection(c);
        const ns = inNamespace(coll, namespace);
        const filters = query.documentIds ? Filters.and(ns, coll.filter.byProperty('documentId').containsAny([...query.documentIds])) : ns;
        return coll.query.nearVector(Array.from(query.vector), { limit, filters, includeVector, returnMetadata: ['distance'], returnProperties: ['documentId', 'chunkId'] });
      }, grpc());
      return result.objects.map((o) => {
        const distance = o.metadata?.distance;
        if (typeof distance !== 'number') throw new PlatformError('upstream_error', 'Weaviate answered a hit without its distance');
        const props = o.properties as { documentId?: unknown; chunkId?: unknown };
        // Cosine distance d = 1 - cos  ⇒  score = 1 - d (clamped: float rounding may pass ±1).
        const hit: { id: string; documentId: string; score: number; vector?: Float32Array } = {
          id: String(props.chunkId),
          documentId: String(props.documentId),
          score: Math.max(-1, Math.min(1, 1 - distance)),
        };
        if (includeVector) hit.vector = Float32Array.from((o.vectors.default as number[] | undefined) ?? []);
        return hit;
      });
    },

    deleteDocument(namespace, documentId) {
      return deleteWhere((c) => Filters.and(inNamespace(c, namespace), c.filter.byProperty('documentId').equal(documentId)));
    },

    async dropNamespace(namespace) {
      await deleteWhere((c) => inNamespace(c, namespace));
    },

    async count(namespace) {
      if (!(await classExists())) return 0;
      const result = await run((c) => {
        const coll = collection(c);
        return coll.aggregate.overAll({ filters: inNamespace(coll, namespace) });
      }, grpc());
      return result.totalCount;
    },

    async check({ dimensions: want, signal }) {
      if (!Number.isInteger(want) || want < 1) throw PlatformError.invalid(`dimensions must be a positive integer, got ${want}`);
      // Reachable and the key accepted (REST)…
      const meta = await run((c) => c.getMeta(), { signal });
      const version = /^v?(\d+)\.(\d+)/.exec(String(meta.version ?? ''));
      if (version && (Number(version[1]) < MIN_VERSION[0] || (Number(version[1]) === MIN_VERSION[0] && Number(version[2]) < MIN_VERSION[1]))) {
        throw PlatformError.invalid(`Invalid vectorstore configuration: Weaviate ${meta.version} is too old: the adapter needs ${MIN_VERSION.join('.')} or newer`);
      }
      // …then the class (created if missing), its metric and vector length, over REST and gRPC.
      exists = false;
      dimensions = undefined;
      await verify(want, signal);
    },

    async close() {
      const current = client;
      client = undefined;
      exists = false;
      dimensions = undefined;
      probeAt = undefined;
      if (current) await current.then(({ client: c }) => c.close()).catch(() => {});
    },
  };
}
