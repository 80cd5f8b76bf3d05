import type { z } from 'zod';
import type { Caller, PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import type { PutSettingsRequest, PutSettingsResponse } from '../schemas/knowledge.js';
import type { Ingestion } from './ingest/ingestion.js';
import { applySettingsChange, chunkingChanged } from './settings.js';
import type { KnowledgeStores } from './stores.js';

/** A store that cannot be used, as the settings route answers it: "Invalid vectorstore configuration: <reason>" (400). */
function invalidStoreConfiguration(error: unknown): PlatformError {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.replace(/^Invalid vectorstore configuration: /, '');
  return PlatformError.invalid(`Invalid vectorstore configuration: ${reason}`, [{ path: ['settings', 'vectorStoreConfig'], code: 'custom', message: reason }]);
}

/**
 * Changes a project's settings (the project checked already; see `KnowledgeService#updateSettings`):
 * decides whether the project can move to the model and store the change names, moves it
 * (re-indexing every document) or stores the settings, and says whether re-indexing was started,
 * is suggested (new chunking) or is not needed.
 */
export async function updateSettings(
  deps: { readonly ctx: Pick<PlatformContext, 'storage' | 'clock'>; readonly stores: KnowledgeStores; readonly ingestion: Ingestion },
  caller: Caller,
  parsed: z.output<typeof PutSettingsRequest>,
): Promise<PutSettingsResponse> {
  const { stores, ingestion } = deps;
  const previous = await stores.settings(parsed.projectId);
  const body = { projectId: parsed.projectId, settings: applySettingsChange(previous, parsed.settings) };
  const before = stores.embedderFor(previous, caller.userId);
  const after = stores.embedderFor(body.settings, caller.userId); // an unknown model is refused here
  const oldStore = await stores.vectorsFor(previous).catch(() => undefined);
  // A new store must be usable before the project moves to it (reachable, the key accepted,
  // an existing index of the right dimension): the settings are not changed otherwise. The
  // same store is checked again when the model's dimension changes: an index of a server
  // (Chroma, Qdrant, Pinecone) has one dimension, so a model of another cannot go there (in
  // PostgreSQL mode every project's default store is such an index). A model that tells its
  // dimension only once it has embedded (0) is checked by its first write instead.
  const newStore = await stores.vectorsFor(body.settings).catch((error: unknown) => {
    throw invalidStoreConfiguration(error);
  });
  const newDimension = after.dimensions > 0 && after.dimensions !== before.dimensions;
  if ((newStore !== oldStore || newDimension) && newStore.check) {
    await newStore.check({ dimensions: after.dimensions }).catch((error: unknown) => {
      throw invalidStoreConfiguration(error);
    });
  }
  const at = deps.ctx.clock.now();
  if (before.id !== after.id || newStore !== oldStore) {
    // The settings are stored with the documents' new jobs: both, or (a full queue) neither.
    const queued = await ingestion.reindexProject(caller, body.projectId, { previous: before, previousStore: oldStore ?? newStore, settings: body.settings, at });
    const provider = body.settings.vectorstoreProvider;
    // No provider (or `builtin`) is the server's default store: the built-in one on one machine, the shared one with --vector-store.
    const what = before.id !== after.id ? `with ${after.id}` : `into ${provider && provider !== 'builtin' ? `the ${provider}` : 'the default'} store`;
    return { success: true, message: `Knowledge settings updated; re-indexing ${queued} document${queued === 1 ? '' : 's'} ${what}`, reindex: 'started' };
  }
  await stores.putSettings(body.projectId, body.settings, at);
  // Documents already indexed keep the chunks they were cut into: offered, not forced (a
  // large knowledge base may be worth re-indexing only once the chunking is right).
  const hasDocuments = async () => (await deps.ctx.storage.documents.list({ userId: caller.userId, projectId: body.projectId, limit: 1, offset: 0 })).total > 0;
  if (chunkingChanged(previous, body.settings) && (await hasDocuments())) {
    return {
      success: true,
      message: 'Knowledge settings updated; documents indexed before keep their chunks until re-indexed (POST /api/knowledge/reindex)',
      reindex: 'suggested',
    };
  }
  return { success: true, message: 'Knowledge settings updated', reindex: 'none' };
}
