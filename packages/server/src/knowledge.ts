import { join, resolve } from 'node:path';
import { BUILTIN_EMBEDDING_MODEL, builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { openaiEmbedder } from '@agent-platform/adapters-embedding/openai';
import { isHubModelCached, transformersEmbedder, transformersHubEmbedder } from '@agent-platform/adapters-embedding/transformers';
import { fileBlobStore } from '@agent-platform/adapters-storage/blobs';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import {
  type BlobStore,
  type ByteLimit,
  createGuardedFetch,
  createOutboundPolicy,
  type DocumentLimits,
  type EmbedderKind,
  type EmbedderResolver,
  type EmbeddingModel,
  type GuardedFetch,
  type KnowledgeAdapters,
  PlatformError,
  type VectorStore,
  type VectorStoreConnection,
  type VectorStoreFactory,
  type VectorStoreProvider,
} from '@agent-platform/core';
import { EMBEDDER_FORMS, splitEmbedderName } from '@agent-platform/core/internal';
import { instanceIdOf } from './deployment.js';
import { KNOWLEDGE_LIMIT_HINTS } from './document-limits.js';
import { hubUrl, operatorHosts } from './outbound.js';
import type { ServerUpstreamLimits } from './upstream-limit-flags.js';

/** What every store's factory gets: the guarded fetch its client connects through, and the bound on each answer. */
interface StoreConnection {
  readonly fetch: VectorStoreConnection['fetch'];
  readonly answerLimit?: ByteLimit;
}

/**
 * One factory per third-party store of the registry (`VECTOR_STORES` in core): a store without
 * one is a compile error. Each loads its adapter (its official client with it) only when a
 * project first uses that provider.
 */
const VECTOR_STORE_FACTORIES = {
  pinecone: async (config, options) => (await import('@agent-platform/adapters-vector/pinecone')).createPineconeVectorStore(config, options),
  weaviate: async (config, options) => (await import('@agent-platform/adapters-vector/weaviate')).createWeaviateVectorStore(config, options),
  qdrant: async (config, options) => (await import('@agent-platform/adapters-vector/qdrant')).createQdrantVectorStore(config, options),
  chroma: async (config, options) => (await import('@agent-platform/adapters-vector/chroma')).createChromaVectorStore(config, options),
} satisfies Record<VectorStoreProvider, (config: Record<string, unknown>, options: StoreConnection) => Promise<VectorStore>>;

/**
 * The third-party stores of `vectorstoreProvider`, each loaded (its official client with it)
 * only when a project first uses that provider. Every store connects through `fetch` (the
 * platform's guarded fetch): their clients' requests, and Weaviate's gRPC address, obey the
 * outbound policy. A name that is none of them is refused.
 */
export function vectorStoreFactory(answerLimit?: ByteLimit): VectorStoreFactory {
  return async (provider, config, { fetch }): Promise<VectorStore> => {
    if (!Object.hasOwn(VECTOR_STORE_FACTORIES, provider)) throw new PlatformError('unsupported', `Unknown vector store provider "${provider}"`);
    // Each answer of the store is read under `answerLimit` (`--max-vector-answer`).
    return VECTOR_STORE_FACTORIES[provider](config, { fetch, ...(answerLimit ? { answerLimit } : {}) });
  };
}

export interface EmbedderResolverOptions {
  /**
   * The data folder: `local:<name>` finds a model folder in `<dataDir>/models/<name>`, and
   * `hf:<owner>/<name>` keeps hub downloads in `<dataDir>/models/hub`. Without it neither works.
   */
  readonly dataDir?: string;
  /**
   * The fetch of the operator's own URLs the embedders reach: OPENAI_BASE_URL (`openai:`) and
   * the Hugging Face hub (`hf:`, HF_ENDPOINT or huggingface.co, and the hosts it redirects to).
   * The server passes its guarded fetch that allows the operator's hosts. Default: a guarded
   * fetch of the default policy with those hosts allowed (`operatorHosts`), closed with the resolver.
   */
  readonly fetch?: GuardedFetch;
  /**
   * Whether an `hf:` model that is not in `<dataDir>/models/hub` yet may be downloaded
   * (`--allow-model-downloads`, AGENT_PLATFORM_ALLOW_MODEL_DOWNLOADS). Default false: then
   * `hf:` names only models already in the cache (put there by the operator), and any other
   * is refused (400) naming the flag.
   */
  readonly allowDownloads?: boolean;
  /** Most bytes of one answer of an embedding server (`openai:` models), and the flag that raises it (`--max-embeddings-answer`). Default 16 MiB. */
  readonly answerLimit?: ByteLimit;
}

/** The answer to an `hf:` model that is not in the cache while downloads are off. */
const downloadsOff = (name: string) =>
  PlatformError.invalid(
    `settings.embeddingModel: "${name}" is not in the model cache and model downloads are off; the operator can allow them with --allow-model-downloads (AGENT_PLATFORM_ALLOW_MODEL_DOWNLOADS=true)`,
    [{ path: ['settings', 'embeddingModel'], code: 'custom', message: 'not in the model cache; model downloads are off (--allow-model-downloads)' }],
  );

/**
 * Chooses the embedder by a project's `embeddingModel` setting: none or `builtin` is the
 * built-in offline model (AGENT_PLATFORM_EMBED_WORKERS, a positive integer, sets its most
 * worker threads; default one per core, at most 4); `openai:<model>` is an OpenAI-compatible
 * server (OPENAI_API_KEY, OPENAI_BASE_URL from the environment until provider credentials
 * exist); `local:<folder>` is an ONNX sentence-embedding model folder run in-process by
 * transformers.js (a folder the operator put under `<dataDir>/models/`); `hf:<owner>/<name>` is
 * a Hugging Face hub model kept in `<dataDir>/models/hub/`, downloaded on first use only when
 * the operator allows downloads (`options.allowDownloads`). One embedder per model, shared by
 * projects. Every request goes through `options.fetch`.
 */
export function embedderResolver(env: NodeJS.ProcessEnv = process.env, options: EmbedderResolverOptions = {}): EmbedderResolver & { close(): Promise<void> } {
  const ownFetch = options.fetch ? undefined : createGuardedFetch(createOutboundPolicy({ allowedHosts: operatorHosts(env, { modelDownloads: options.allowDownloads === true }) }));
  const fetch = options.fetch ?? (ownFetch as GuardedFetch);
  const workers = Number(env.AGENT_PLATFORM_EMBED_WORKERS);
  const builtin = builtinEmbedder(Number.isInteger(workers) && workers > 0 ? { workers } : {});
  const remote = new Map<string, EmbeddingModel>();
  const models = options.dataDir === undefined ? undefined : join(resolve(options.dataDir), 'models');
  const unknown = (name: string) => PlatformError.invalid(`settings.embeddingModel: unknown embedding model "${name}"; use ${EMBEDDER_FORMS}`);
  const cached = (key: string, make: () => EmbeddingModel): EmbeddingModel => {
    let embedder = remote.get(key);
    if (!embedder) {
      embedder = make();
      remote.set(key, embedder);
    }
    return embedder;
  };
  // One factory per kind of `<kind>:<value>` names (`EMBEDDERS` in core): a kind without one is a compile error.
  const kinds = {
    openai: (value) =>
      cached(`openai:${value}`, () =>
        openaiEmbedder({
          model: value,
          fetch: fetch as unknown as typeof globalThis.fetch,
          ...(options.answerLimit ? { answerLimit: options.answerLimit } : {}),
          ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
          ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
        }),
      ),
    local: (value, name) => {
      // Only folders the operator put in <data>/models: an API caller must not make the server
      // read (or tell apart) arbitrary paths on its disk.
      if (!models) throw PlatformError.invalid(`settings.embeddingModel: "${name}" needs a data folder with a models/ folder`);
      if (!/^[\w-][\w.-]*$/.test(value)) throw PlatformError.invalid(`settings.embeddingModel: "${name}" must name a folder in the data folder's models/ (letters, digits, ".", "_", "-")`);
      const folder = join(models, value);
      // The folder is read and checked here, so a wrong one is a 400 naming it.
      // Messages name the folder by its place in the data folder, never by the server's absolute path.
      return cached(`local:${folder}`, () => transformersEmbedder({ model: folder, label: `models/${value}` }));
    },
    hf: (value, name) => {
      if (!models) throw PlatformError.invalid(`settings.embeddingModel: "${name}" needs a data folder to keep the model in`);
      if (!/^[\w.-]+\/[\w.-]+$/.test(value) || value.includes('..')) throw PlatformError.invalid(`settings.embeddingModel: "${name}" must be hf:<owner>/<name>`);
      const cacheDir = join(models, 'hub');
      // Checked on every resolve (not cached): a model the operator puts in the cache later is then usable.
      if (!options.allowDownloads && !isHubModelCached(cacheDir, value)) throw downloadsOff(name);
      return cached(`hf:${value}`, () => transformersHubEmbedder({ model: value, cacheDir, download: options.allowDownloads === true, remoteHost: hubUrl(env), fetch, label: `models/hub/${value}` }));
    },
  } satisfies Record<EmbedderKind, (value: string, name: string) => EmbeddingModel>;
  const resolveModel = (name: string | undefined): EmbeddingModel => {
    if (!name || name === 'builtin' || name === BUILTIN_EMBEDDING_MODEL) return builtin;
    const split = splitEmbedderName(name);
    if (!split) throw unknown(name);
    return kinds[split.kind](split.value, name);
  };
  return Object.assign(resolveModel, {
    close: async () => {
      await Promise.all([builtin.close?.(), ...[...remote.values()].map((embedder) => embedder.close?.()), ownFetch?.close()]);
    },
  });
}

/** What instances on one database share instead of the data folder's own stores (the server's PostgreSQL mode). */
export interface SharedKnowledge {
  /** The store of projects that name none, instead of the built-in one in `vectors/`. */
  readonly vectors?: VectorStore;
  /** Where uploaded files and posted texts are kept, instead of `files/`. */
  readonly blobs?: BlobStore;
  /** The job queue's owner id of this instance. Default `host:dataDir` (one server per data folder). */
  readonly instanceId?: string;
}

/**
 * The embedded knowledge defaults under a data folder, each replaceable by `options.shared`:
 * vectors in `vectors/`, sources in `files/`, embedders by `embedderResolver` (with `options`: the operator's fetch and whether hub
 * downloads are allowed); documents read in child processes under `limits`, whose errors name
 * the server's flags, at most AGENT_PLATFORM_DOCUMENT_PROCESSES (a positive integer; default 2)
 * at once.
 */
export async function openKnowledge(
  dataDir: string,
  options: Omit<EmbedderResolverOptions, 'dataDir' | 'answerLimit'> & {
    readonly env?: NodeJS.ProcessEnv;
    readonly limits?: DocumentLimits;
    readonly shared?: SharedKnowledge;
    /** Bounds on the answers of embedding servers and third-party vector stores (`--max-embeddings-answer`, `--max-vector-answer`). */
    readonly upstreamLimits?: Pick<ServerUpstreamLimits, 'embeddingsAnswerBytes' | 'vectorAnswerBytes'>;
  } = {},
): Promise<KnowledgeAdapters & { close(): Promise<void> }> {
  const root = resolve(dataDir);
  const { env = process.env, limits, shared = {}, upstreamLimits, ...resolverOptions } = options;
  const embedder = embedderResolver(env, {
    ...resolverOptions,
    dataDir: root,
    ...(upstreamLimits ? { answerLimit: upstreamLimits.embeddingsAnswerBytes } : {}),
  });
  const vectors = shared.vectors ?? (await builtinVectorStore({ dir: join(root, 'vectors'), label: 'vectors' }));
  const processes = Number(env.AGENT_PLATFORM_DOCUMENT_PROCESSES);
  return {
    vectors,
    vectorStores: vectorStoreFactory(upstreamLimits?.vectorAnswerBytes),
    embedder,
    blobs: shared.blobs ?? fileBlobStore({ dir: join(root, 'files'), label: 'files' }),
    limitHints: KNOWLEDGE_LIMIT_HINTS,
    instanceId: shared.instanceId ?? instanceIdOf({}, root),
    ...(limits ? { limits } : {}),
    ...(Number.isInteger(processes) && processes > 0 ? { documentProcesses: processes } : {}),
    close: embedder.close,
  };
}
