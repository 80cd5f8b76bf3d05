import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type EmbeddingModel } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { bagOfWords } from './helpers.js';

// The indexing queue: how many documents are indexed at once (enough to keep a batching
// embedder fed), and a byte budget so that large sources do not all parse at the same time.

/** An embedder whose calls wait until released; it records how many were waiting at most. */
function gatedEmbedder() {
  let inFlight = 0;
  let most = 0;
  let open = false;
  const waiting: (() => void)[] = [];
  const model: EmbeddingModel = {
    id: 'test:gated',
    dimensions: 64,
    async embed(texts) {
      inFlight++;
      most = Math.max(most, inFlight);
      if (!open) await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight--;
      return texts.map((t) => bagOfWords(t, 64));
    },
  };
  return {
    model,
    inFlight: () => inFlight,
    most: () => most,
    release() {
      open = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

async function setup(knowledge: { concurrency?: number; concurrentBytes?: number } = {}) {
  const gate = gatedEmbedder();
  const platform = new AgentPlatform({
    storage: await sqliteStorage({ path: ':memory:' }),
    knowledge: { vectors: await builtinVectorStore(), embedder: gate.model, waitMs: 1, ...knowledge },
  });
  const { userId } = await platform.createUserWithKey({ name: 't' });
  const me = { userId };
  const { project } = await platform.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
  const add = async (i: number, content: string) => {
    const res = await platform.createDocument(me, { projectId: project.id, fileName: `d${i}.txt`, fileType: 'txt', sourceType: 'upload', content });
    return res.documentId as string;
  };
  const statuses = async () => (await platform.listDocuments(me, { projectId: project.id, limit: 100 })).documents.map((d) => d.status);
  const settle = async (until: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 500 && !(await until()); i++) await new Promise((r) => setTimeout(r, 10));
  };
  return { gate, add, statuses, settle };
}

describe('the indexing queue', () => {
  it('indexes 32 documents at a time by default, so their texts wait together for the embedder', async () => {
    const { gate, add, statuses, settle } = await setup();
    for (let i = 0; i < 40; i++) await add(i, `Document number ${i} about refunds and invoices.`);
    await settle(() => gate.inFlight() === 32);
    await new Promise((r) => setTimeout(r, 50)); // no 33rd starts
    expect(gate.inFlight()).toBe(32);
    expect((await statuses()).filter((s) => s === 'pending')).toHaveLength(8);
    gate.release();
    await settle(async () => (await statuses()).every((s) => s === 'completed'));
    expect((await statuses()).every((s) => s === 'completed')).toBe(true);
    expect(gate.most()).toBe(32);
  });

  it('keeps the sources being indexed under the byte budget, and runs a larger document alone', async () => {
    const { gate, add, statuses, settle } = await setup({ concurrentBytes: 1000 });
    const text = (n: number) => 'word '.repeat(n / 5);
    await add(0, text(600));
    await add(1, text(300));
    await add(2, text(600));
    await add(3, text(5000));
    await settle(() => gate.inFlight() === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(gate.inFlight()).toBe(2); // 600 + 300; 600 more would pass 1,000
    gate.release();
    await settle(async () => (await statuses()).every((s) => s === 'completed'));
    expect((await statuses()).every((s) => s === 'completed')).toBe(true); // the 5,000-byte one too, alone
    expect(gate.most()).toBe(2);
  });
});
