import { PlatformError } from '../errors.js';
import type { KnowledgeSettings } from '../schemas/knowledge.js';
import type { StorageAdapter } from '../storage/types.js';
import type { EmbeddingModel, VectorStore, VectorStoreProvider } from './interfaces.js';
import type { KnowledgeOptions } from './options.js';
import { openSettings, sealSettings } from './settings-secrets.js';

/** The namespace of a project's vectors for one embedding model: vectors of two models never mix. */
export const vectorNamespace = (projectId: string, model: EmbeddingModel) => `${projectId}:${model.id}`;

/**
 * A project's settings as stored (the secrets of its vector store configuration sealed at rest),
 * and what they choose: the embedding model and the vector store (third-party stores made once
 * per configuration and kept).
 */
export class KnowledgeStores {
  readonly #o: Pick<KnowledgeOptions, 'storage' | 'secrets' | 'vectors' | 'vectorStores' | 'embedders'>;
  readonly #stores = new Map<string, Promise<VectorStore>>();

  constructor(options: Pick<KnowledgeOptions, 'storage' | 'secrets' | 'vectors' | 'vectorStores' | 'embedders'>) {
    this.#o = options;
  }

  /** A project's settings with the secrets of its vector store configuration opened (for use, never for answers). */
  async settings(projectId: string): Promise<KnowledgeSettings> {
    const stored = await this.#o.storage.knowledgeSettings.get(projectId);
    return stored ? openSettings(stored, this.#o.secrets) : {};
  }

  /** Stores a project's settings as a whole, the secrets of its vector store configuration sealed (in `tx` when given). */
  async putSettings(projectId: string, settings: KnowledgeSettings, at: Date, tx: StorageAdapter = this.#o.storage): Promise<void> {
    await tx.knowledgeSettings.put(projectId, sealSettings(settings, this.#o.secrets), at);
  }

  /**
   * The embedding model of a project's settings, for the user who owns the project (its
   * documents, its search): the embedder resolver is told who, and nothing else of the call.
   */
  embedderFor(settings: KnowledgeSettings, userId: string): EmbeddingModel {
    return this.#o.embedders(settings.embeddingModel, { userId });
  }

  /** The vector store of a project's settings: the built-in one, or its provider's (one per configuration). */
  vectorsFor(settings: KnowledgeSettings): Promise<VectorStore> {
    const provider = settings.vectorstoreProvider as VectorStoreProvider | 'builtin' | undefined;
    if (!provider || provider === 'builtin') return Promise.resolve(this.#o.vectors);
    const factory = this.#o.vectorStores;
    if (!factory) return Promise.reject(PlatformError.invalid(`Invalid vectorstore configuration: ${provider} stores are not configured on this server`));
    const config = (settings.vectorStoreConfig ?? {}) as Record<string, unknown>;
    const key = JSON.stringify([provider, config]);
    let store = this.#stores.get(key);
    if (!store) {
      store = Promise.resolve().then(() => factory(provider, config));
      // A configuration that cannot make a store is not kept: the next call tries again.
      store.catch(() => this.#stores.delete(key));
      this.#stores.set(key, store);
    }
    return store;
  }

  /** Closes the third-party stores made so far. */
  async closeStores(): Promise<void> {
    const stores = [...this.#stores.values()];
    this.#stores.clear();
    await Promise.all(stores.map((s) => s.then((store) => store.close()).catch(() => {})));
  }
}
