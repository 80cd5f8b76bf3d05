import { join, resolve } from 'node:path';
import { fileBlobStore } from '@agent-platform/adapters-storage/blobs';
import { BUILTIN_EMBEDDING_MODEL, builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { openaiEmbedder } from '@agent-platform/adapters-embedding/openai';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { type EmbedderResolver, type EmbeddingModel, type KnowledgeAdapters, PlatformError, type VectorStore, type VectorStoreFactory } from '@agent-platform/core';

/**
 * The third-party stores of `vectorstoreProvider`, each loaded (its official client with it)
 * only when a project first uses that provider.
 */
export const vectorStoreFactory: VectorStoreFactory = async (provider, config): Promise<VectorStore> => {
  switch (provider) {
    case 'qdrant':
      return (await import('@agent-platform/adapters-vector/qdrant')).createQdrantVectorStore(config);
    case 'chroma':
      return (await import('@agent-platform/adapters-vector/chroma')).createChromaVectorStore(config);
    case 'pinecone':
      return (await import('@agent-platform/adapters-vector/pinecone')).createPineconeVectorStore(config);
    case 'weaviate':
      return (await import('@agent-platform/adapters-vector/weaviate')).createWeaviateVectorStore(config);
  }
};

/**
 * Chooses the embedder by a project's `embeddingModel` setting: none or `builtin` is the
 * built-in offline model; `openai:<model>` is an OpenAI-compatible server (OPENAI_API_KEY,
 * OPENAI_BASE_URL from the environment until provider credentials exist).
 */
export function embedderResolver(env: NodeJS.ProcessEnv = process.env): EmbedderResolver & { close(): Promise<void> } {
  const builtin = builtinEmbedder();
  const remote = new Map<string, EmbeddingModel>();
  const resolveModel = (name: string | undefined): EmbeddingModel => {
    if (!name || name === 'builtin' || name === BUILTIN_EMBEDDING_MODEL) return builtin;
    const model = /^openai:(.+)$/.exec(name)?.[1];
    if (!model) {
      throw PlatformError.invalid(`settings.embeddingModel: unknown embedding model "${name}"; use "builtin" or "openai:<model>"`);
    }
    let embedder = remote.get(model);
    if (!embedder) {
      embedder = openaiEmbedder({
        model,
        ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
        ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
      });
      remote.set(model, embedder);
    }
    return embedder;
  };
  return Object.assign(resolveModel, { close: async () => builtin.close?.() });
}

/** The embedded knowledge defaults under a data folder: vectors in `vectors/`, sources in `files/`. */
export async function openKnowledge(dataDir: string): Promise<KnowledgeAdapters & { close(): Promise<void> }> {
  const root = resolve(dataDir);
  const embedder = embedderResolver();
  const vectors = await builtinVectorStore({ dir: join(root, 'vectors') });
  return { vectors, vectorStores: vectorStoreFactory, embedder, blobs: fileBlobStore({ dir: join(root, 'files') }), close: embedder.close };
}
