import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentPlatform } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPlatform } from '../src/server.js';
import { documents, duplicates, questions } from './fixtures/retrieval-set.js';

// Real components: SQLite (FTS5), the built-in vector store and the built-in embedder.
let dir: string;
let platform: AgentPlatform;
let me: { userId: string };
let projectId: string;
const docIds = new Map<string, string>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-retrieval-'));
  platform = await openPlatform(dir, { knowledge: true });
  me = { userId: (await platform.createUserWithKey({ name: 'eval' })).userId };
  projectId = (await platform.createProject(me, { name: 'eval', model: 'm', provider: 'openai' })).project.id;
  await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 128, chunkOverlap: 16 } });
  for (const [fileName, content] of Object.entries(documents)) {
    const res = await platform.createDocument(me, { projectId, fileName, fileType: 'md', sourceType: 'upload', content });
    // The first document may outlast the route's wait (a reader process starts for it).
    for (let i = 0; i < 1200 && (await platform.getDocument(me, res.documentId as string)).document.status === 'processing'; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await platform.getDocument(me, res.documentId as string)).document.status).toBe('completed');
    docIds.set(res.documentId as string, fileName);
  }
}, 120_000);
afterAll(async () => {
  await platform.close();
  await rm(dir, { recursive: true, force: true });
});

type Mode = { searchType?: 'semantic' | 'hybrid' | 'mrr'; alpha?: number };

/** Rank (1-based) of the first chunk of the labelled document among the top `k`, or undefined. */
async function rankOf(question: string, doc: string, mode: Mode, k = 5): Promise<number | undefined> {
  const res = await platform.searchKnowledge(me, { projectId, query: question, topK: k, ...mode });
  const i = res.documents.findIndex((d) => docIds.get(d.metadata.documentId as string) === doc);
  return i < 0 ? undefined : i + 1;
}

async function measure(mode: Mode, subset = questions) {
  let hits = 0;
  let reciprocal = 0;
  for (const q of subset) {
    const rank = await rankOf(q.question, q.doc, mode);
    if (rank) {
      hits++;
      reciprocal += 1 / rank;
    }
  }
  return { recallAt5: hits / subset.length, mrr: reciprocal / subset.length };
}

describe('retrieval quality on a labelled set (12 documents, 48 questions)', () => {
  it('semantic search finds the answering document in the top 5 for most questions', async () => {
    const semantic = await measure({ searchType: 'semantic' });
    console.log('semantic', semantic);
    expect(semantic.recallAt5).toBeGreaterThanOrEqual(0.9);
  });

  it('the default search (hybrid, measured alpha) ranks better than pure semantic and pure keyword', async () => {
    // No searchType and no alpha: the defaults (hybrid, DEFAULT_ALPHA).
    const byDefault = await measure({});
    const semantic = await measure({ searchType: 'semantic' });
    const keyword = await measure({ searchType: 'hybrid', alpha: 0 });
    console.log('all questions', { byDefault, semantic, keyword });
    expect(byDefault.mrr).toBeGreaterThan(semantic.mrr);
    expect(byDefault.mrr).toBeGreaterThan(keyword.mrr);
    // Questions that hinge on an exact term: the keyword side carries them, semantic alone does not.
    const subset = questions.filter((q) => q.keyword);
    expect(subset.length).toBeGreaterThanOrEqual(12);
    const exact = { byDefault: await measure({}, subset), semantic: await measure({ searchType: 'semantic' }, subset) };
    expect(exact.byDefault.mrr).toBeGreaterThan(exact.semantic.mrr);
  });

  it('MMR returns fewer near-duplicates than semantic search', async () => {
    const dupProject = (await platform.createProject(me, { name: 'dups', model: 'm', provider: 'openai' })).project.id;
    for (const [i, text] of [...duplicates.near, ...duplicates.distinct].entries()) {
      await platform.createDocument(me, { projectId: dupProject, fileName: `w${i}.txt`, fileType: 'txt', sourceType: 'upload', content: text });
    }
    const near = new Set(duplicates.near);
    const count = async (searchType: 'semantic' | 'mrr') =>
      (await platform.searchKnowledge(me, { projectId: dupProject, query: duplicates.question, topK: 4, searchType })).documents.filter((d) => near.has(d.content)).length;
    const semantic = await count('semantic');
    const mmr = await count('mrr');
    console.log('near-duplicates in top 4', { semantic, mmr });
    expect(mmr).toBeLessThan(semantic);
  });
});
