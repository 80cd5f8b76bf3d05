import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type EmbeddingModel, type VectorStore } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { bagOfWords } from './helpers.js';

// MMR ranks by the fused (keyword + semantic) score and diversifies with the chunks' vectors,
// also for candidates only the keyword side found (their vectors come from storage).

/** A hashed bag-of-words embedder: texts sharing words are similar. */
const wordsEmbedder: EmbeddingModel = {
  id: 'test:bow',
  dimensions: 128,
  async embed(texts) {
    return texts.map((t) => bagOfWords(t, 128));
  },
};

async function setup(vectors: VectorStore) {
  const platform = new AgentPlatform({ storage: memoryStorage(), knowledge: { vectors, embedder: () => wordsEmbedder, waitMs: 10_000 } });
  const { userId } = await platform.createUserWithKey({ name: 't' });
  const me = { userId };
  const { project } = await platform.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
  const texts = {
    first: 'Error E1234 means the pump overheated, stop the pump and let the pump cool.',
    twin: 'Error E1234 means the pump overheated: stop the pump and let the pump cool down.',
    other: 'The E1234 code is also written to the maintenance log with a timestamp.',
    // Weak keyword matches (one "pump" in a longer text): the bottom of the keyword list.
    ...Object.fromEntries(['garden', 'office', 'boat'].map((w) => [w, `The ${w} has a small pump somewhere, next to many other things of the ${w} that nobody ever lists in a manual.`])),
  };
  const ids = new Map<string, string>();
  for (const [name, content] of Object.entries(texts)) {
    const res = await platform.createDocument(me, { projectId: project.id, fileName: `${name}.txt`, fileType: 'txt', sourceType: 'upload', content });
    expect(res.status).toBe('completed');
    ids.set(res.documentId as string, name);
  }
  const top2 = async (searchType: 'hybrid' | 'mrr') =>
    (await platform.searchKnowledge(me, { projectId: project.id, query: 'E1234 pump', topK: 2, searchType })).documents.map((d) => ids.get(d.metadata.documentId as string));
  return { top2 };
}

describe('mrr search', () => {
  it('ranks by the fused score and passes over a near-duplicate of a pick', async () => {
    const { top2 } = await setup(await builtinVectorStore());
    expect(await top2('hybrid')).toEqual(['first', 'twin']);
    expect(await top2('mrr')).toEqual(['first', 'other']);
  });

  it('diversifies candidates only the keyword side found, with the vectors kept in storage', async () => {
    // A store whose queries find nothing: every candidate comes from the keyword side alone.
    const store = await builtinVectorStore();
    const blind: VectorStore = { ...store, upsert: store.upsert.bind(store), close: store.close.bind(store), query: async () => [] };
    const { top2 } = await setup(blind);
    expect(await top2('hybrid')).toEqual(['first', 'twin']);
    expect(await top2('mrr')).toEqual(['first', 'other']);
  });
});
