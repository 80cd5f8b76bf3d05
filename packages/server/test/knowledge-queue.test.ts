import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type EmbeddingModel } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { bagOfWords } from './helpers.js';

// The indexing queue: how many documents are indexed at once (enough to keep a batching
// embedder fed), a byte budget so that large sources do not all parse at the same time, and
// fairness between users: a spare slot for a user with nothing running, documents that do not
// fit passed over (never waited for) until overdue, and the bound on what one user may queue.

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

/**
 * An embedder whose calls each wait until released by a word of their texts (each test
 * document has a word of its own): it tells which documents are being embedded now.
 */
function heldEmbedder() {
  const calls: { texts: readonly string[]; resolve: () => void }[] = [];
  const model: EmbeddingModel = {
    id: 'test:held',
    dimensions: 64,
    async embed(texts) {
      await new Promise<void>((resolve) => calls.push({ texts, resolve }));
      return texts.map((t) => bagOfWords(t, 64));
    },
  };
  return {
    model,
    /** The words of the documents being embedded now, sorted (one per call). */
    embedding: () => calls.map((c) => c.texts.join(' ').split(' ')[0] as string).sort(),
    release(word: string) {
      for (const call of calls.filter((c) => c.texts.join(' ').startsWith(word))) {
        calls.splice(calls.indexOf(call), 1);
        call.resolve();
      }
    },
  };
}

const settle = async (until: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 1000 && !(await until()); i++) await new Promise((r) => setTimeout(r, 10));
  return until();
};

/** A platform on SQLite with `embedder` and two users, each with a project; `add` posts a document of either. */
async function twoUsers(embedder: EmbeddingModel, knowledge: { concurrency?: number; concurrentBytes?: number; overtakeMs?: number; maxQueuedDocuments?: number } = {}) {
  const platform = new AgentPlatform({
    storage: await sqliteStorage({ path: ':memory:' }),
    knowledge: { vectors: await builtinVectorStore(), embedder, waitMs: 1, pollMs: 20, ...knowledge },
  });
  await platform.start(); // polls for jobs every pollMs
  const users = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const { userId } = await platform.createUserWithKey({ name });
      const { project } = await platform.createProject({ userId }, { name: 'p', model: 'm', provider: 'openai' });
      return { caller: { userId }, projectId: project.id };
    }),
  );
  const add = async (user: 0 | 1, fileName: string, content: string) => {
    const { caller, projectId } = users[user] as (typeof users)[number];
    return (await platform.createDocument(caller, { projectId, fileName, fileType: 'txt', sourceType: 'upload', content })).documentId as string;
  };
  const status = async (user: 0 | 1, id: string) => (await platform.getDocument((users[user] as (typeof users)[number]).caller, id)).document.status;
  return { platform, users, add, status };
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

  it("gives a user with nothing running a spare slot when another user's documents fill every slot", async () => {
    const held = heldEmbedder();
    const { platform, add, status } = await twoUsers(held.model, { concurrency: 2 });
    try {
      for (const word of ['alpha', 'beta', 'gamma', 'delta']) await add(0, `${word}.txt`, `${word} is one of the first user's documents.`);
      expect(await settle(() => held.embedding().length === 2)).toBe(true);
      const other = await add(1, 'omega.txt', "omega is the second user's document.");
      // Taken at once, beside the first user's two: a third slot, the spare one.
      expect(await settle(() => held.embedding().includes('omega'))).toBe(true);
      expect(held.embedding()).toEqual(['alpha', 'beta', 'omega']);
      held.release('omega');
      expect(await settle(async () => (await status(1, other)) === 'completed')).toBe(true);
      // The spare slot is only for a user with nothing running: the first user's third waits.
      await new Promise((r) => setTimeout(r, 100));
      expect(held.embedding()).toEqual(['alpha', 'beta']);
      for (const word of ['alpha', 'beta', 'gamma', 'delta']) {
        expect(await settle(() => held.embedding().includes(word))).toBe(true);
        held.release(word);
      }
    } finally {
      await platform.close();
    }
  });

  it("starts a document of a user with nothing running at once when another user's documents use the whole byte budget", async () => {
    const held = heldEmbedder();
    const { platform, add, status } = await twoUsers(held.model, { concurrentBytes: 1000 });
    const text = (word: string, bytes: number) => `${word} `.repeat(Math.floor(bytes / (word.length + 1)));
    try {
      for (const word of ['alpha', 'beta', 'gamma']) await add(0, `${word}.txt`, text(word, 500));
      expect(await settle(() => held.embedding().length === 2)).toBe(true);
      // 1,000 bytes running: no room left, yet the second user's document starts beside them.
      const other = await add(1, 'omega.txt', text('omega', 300));
      expect(await settle(() => held.embedding().includes('omega'))).toBe(true);
      expect(held.embedding()).toEqual(['alpha', 'beta', 'omega']);
      held.release('omega');
      expect(await settle(async () => (await status(1, other)) === 'completed')).toBe(true);
      // The first user's third waits for room: the spare slot is not theirs.
      await new Promise((r) => setTimeout(r, 100));
      expect(held.embedding()).toEqual(['alpha', 'beta']);
      for (const word of ['alpha', 'beta', 'gamma']) {
        expect(await settle(() => held.embedding().includes(word))).toBe(true);
        held.release(word);
      }
    } finally {
      await platform.close();
    }
  });

  it('passes a document over the room left in the byte budget for ones that fit, then runs it (alone) once it has waited overtakeMs', async () => {
    const held = heldEmbedder();
    const { platform, add, status } = await twoUsers(held.model, { concurrentBytes: 1000, overtakeMs: 400 });
    // Every chunk of a document starts with its word.
    const text = (word: string, bytes: number) => `${word} `.repeat(Math.floor(bytes / (word.length + 1)));
    try {
      await add(0, 'alpha.txt', text('alpha', 600));
      expect(await settle(() => held.embedding().length === 1)).toBe(true);
      const big = await add(0, 'big.txt', text('big', 5000));
      // 5,000 bytes do not fit in the 400 left: the next document that fits runs meanwhile.
      await add(1, 'gamma.txt', text('gamma', 300));
      expect(await settle(() => held.embedding().includes('gamma'))).toBe(true);
      expect(held.embedding()).toEqual(['alpha', 'gamma']);
      expect(await status(0, big)).toBe('pending');
      // Overdue, it is claimed and waits for room: nothing else starts meanwhile.
      const claimed = async () => (await platform.storage.jobs.list()).some((j) => j.documentId === big && j.owner !== null);
      expect(await settle(claimed)).toBe(true);
      const small = await add(1, 'delta.txt', text('delta', 100));
      await new Promise((r) => setTimeout(r, 100));
      expect(await status(1, small)).toBe('pending');
      held.release('alpha');
      held.release('gamma');
      // It runs with no other regular document beside it; the second user, with nothing running
      // once gamma ended, has its small one started at once in the spare slot.
      expect(await settle(() => held.embedding().includes('big') && held.embedding().includes('delta'))).toBe(true);
      const more = await add(0, 'epsilon.txt', text('epsilon', 100));
      await new Promise((r) => setTimeout(r, 100));
      expect(held.embedding()).toEqual(['big', 'delta']);
      held.release('delta');
      held.release('big');
      expect(await settle(() => held.embedding().includes('epsilon'))).toBe(true);
      held.release('epsilon');
      expect(await settle(async () => (await status(0, more)) === 'completed')).toBe(true);
      expect(await settle(async () => (await status(1, small)) === 'completed')).toBe(true);
      expect(await status(0, big)).toBe('completed');
    } finally {
      await platform.close();
    }
  });
});
