import { SHARED_VECTOR_STORE_IDS } from '@agent-platform/core/internal';
import { postgresDatabase } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, call, chromaCount, firstKeyOf, type Instance, SECRET, startCluster, until } from './multi-instance-helpers.js';

// Real servers: the built CLI as child processes on one private PostgreSQL database and one real
// Chroma server, requests spread over them (see multi-instance-helpers.ts). Streams, settings and
// MCP servers across instances: multi-instance-streams.test.ts.

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The environment of an instance: job leases of 10 s (not the 30 s default), so a killed instance's jobs pass on sooner; shorter ones lapse on a loaded machine while their holder lives (its job then runs twice, the late run's writes discarded), which the exactly-once count below would see. */
const sharedEnv = (name: string, database: string, indexName: string): NodeJS.ProcessEnv => ({
  ...cluster.env(name, database, indexName),
  AGENT_PLATFORM_JOB_LEASE_MS: '10000',
});
const start = (name: string, env: NodeJS.ProcessEnv, args: string[] = []) => cluster.start(name, env, args);

/** Runs `serve` expecting it to refuse to start: its exit code and output. */
async function refusal(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number; output: string }> {
  try {
    const instance = await start(`refused-${Math.random().toString(36).slice(2)}`, env, args);
    instance.child.kill('SIGKILL');
    throw new Error('started');
  } catch (error) {
    const e = error as { code?: number; output?: string };
    if (e.output === undefined) throw error;
    return { code: e.code as number, output: e.output };
  }
}

describe('several instances on one PostgreSQL database', () => {
  it('refuses to start on PostgreSQL without a shared secret or a shared vector store, naming what to set', async () => {
    const database = await postgresDatabase();
    const noSecret = await refusal({ AGENT_PLATFORM_DATABASE_URL: database, AGENT_PLATFORM_VECTOR_STORE: 'chroma' });
    expect(noSecret.code).toBe(2);
    expect(noSecret.output).toMatch(/set AGENT_PLATFORM_SECRET/);
    const noStore = await refusal({ AGENT_PLATFORM_SECRET: SECRET }, ['--database', database]);
    expect(noStore.code).toBe(2);
    expect(noStore.output).toContain(`--vector-store ${SHARED_VECTOR_STORE_IDS.join('|')}`);
    const badStore = await refusal({ AGENT_PLATFORM_SECRET: SECRET, AGENT_PLATFORM_DATABASE_URL: database }, ['--vector-store', 'builtin']);
    expect(badStore.output).toContain(`--vector-store must be one of ${SHARED_VECTOR_STORE_IDS.join(', ')}, got "builtin"`);
  }, 60_000);

  it('two instances started together on an empty database migrate once and create one first key', async () => {
    const database = await postgresDatabase();
    const [a, b] = await Promise.all([start('together-a', sharedEnv('a', database, 'together')), start('together-b', sharedEnv('b', database, 'together'))]);
    const keys = [firstKeyOf(a), firstKeyOf(b)].filter(Boolean) as string[];
    expect(keys).toHaveLength(1);
    // The key works on both: one user, one key, seen from either instance.
    for (const instance of [a, b]) {
      const mine = await call(instance, keys[0] as string, 'GET', '/api/auth/keys');
      expect(mine.status).toBe(200);
      expect(mine.body.keys).toHaveLength(1);
    }
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
  }, 90_000);

  it('serves one state from three instances; documents are indexed once by whichever instance claims them, and a killed instance loses none', async () => {
    const database = await postgresDatabase();
    const indexName = 'multi-instance';
    const a = await start('a', sharedEnv('a', database, indexName));
    const key = firstKeyOf(a) as string;
    const [b, c] = await Promise.all([start('b', sharedEnv('b', database, indexName)), start('c', sharedEnv('c', database, indexName))]);
    expect(firstKeyOf(b)).toBeUndefined();
    expect(firstKeyOf(c)).toBeUndefined();
    const all = [a, b, c];
    let turn = 0;
    const next = () => all[turn++ % all.length] as Instance;

    // Create through one, read through every one.
    const created = await call(next(), key, 'POST', '/api/projects/create', { name: 'shared', model: 'gpt-4o-mini', provider: 'openai' });
    expect(created.status).toBeLessThan(300);
    const projectId = (created.body.project?.id ?? created.body.id) as string;
    for (const instance of all) {
      const listed = await call(instance, key, 'GET', '/api/v1/projects');
      expect(listed.body.projects.map((p: { id: string }) => p.id)).toEqual([projectId]);
    }
    const settings = await call(next(), key, 'PUT', '/api/knowledge/settings', { projectId, settings: { embeddingModel: 'openai:fake-embed' } });
    expect(settings.status).toBe(200);

    // Documents posted through A while all three claim jobs.
    const { embedded, held, heldSeen } = cluster.upstream;
    const release = (instance: string) => cluster.upstream.release(instance);
    const count = Number(process.env.MI_COUNT ?? 200);
    const texts = Array.from({ length: count }, (_, i) => `Document ${i} is about topic${i} and the word pump${i % 7}.`);
    const post = (text: string, i: number) => call(a, key, 'POST', '/api/knowledge/documents', { projectId, fileName: `d${i}.txt`, fileType: 'txt', sourceType: 'text', content: text });
    // A (woken at once where the documents are posted) is held until B and C have claimed and
    // embedded documents too, so all three claim.
    held.add('a');
    const posting = Promise.all(texts.map((t, i) => post(t, i)));
    await until('B and C to embed', async () => (['b', 'c'].every((i) => (embedded.get(i)?.length ?? 0) > 0) ? true : undefined), 60_000);
    release('a');
    await posting;
    /** Chunks of the project's documents (every page of the list, through B, which is never killed), for vectors = chunks. */
    const chunks = async () => {
      let total = 0;
      for (let offset = 0; ; offset += 100) {
        const page = await call(b, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&limit=100&offset=${offset}`);
        total += (page.body.documents as { chunkCount: number }[]).reduce((sum, d) => sum + d.chunkCount, 0);
        if (page.body.documents.length < 100) return total;
      }
    };
    const completed = async (instance: Instance) => (await call(instance, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&status=completed&limit=1`)).body.total as number;
    await until('every document indexed', async () => ((await completed(next())) === count ? true : undefined), 240_000).catch(async (error) => {
      // What is left, by status, and one document that is not completed.
      const byStatus: Record<string, number> = {};
      for (const status of ['pending', 'processing', 'completed', 'failed']) {
        byStatus[status] = (await call(a, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&status=${status}&limit=1`)).body.total;
      }
      const left = await call(a, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&status=processing&limit=1`);
      const one = left.body.documents?.[0] ? (await call(a, key, 'GET', `/api/knowledge/documents/${left.body.documents[0].id}`)).body : undefined;
      throw new Error(`${error.message}: ${JSON.stringify(byStatus)} ${JSON.stringify(one)} ${JSON.stringify([...embedded.entries()].map(([k, v]) => [k, v.length]))}`);
    });
    for (const instance of all) expect(await completed(instance)).toBe(count);

    // Each text embedded exactly once, and more than one instance did the work.
    const done = [...embedded.values()].flat().filter((t) => texts.includes(t));
    expect(done.sort()).toEqual([...texts].sort());
    for (const instance of ['a', 'b', 'c']) expect(embedded.get(instance)?.length, instance).toBeGreaterThan(0);
    expect(await chunks()).toBe(count);
    expect(await chromaCount(cluster.chroma, indexName)).toBe(count);

    // Search answers the same from every instance.
    const searches = await Promise.all(all.map((i) => call(i, key, 'POST', '/api/knowledge/search', { projectId, query: 'topic7 pump0', topK: 3 })));
    for (const s of searches) expect(s.body.documents.map((d: { content: string }) => d.content)).toEqual(searches[0]?.body.documents.map((d: { content: string }) => d.content));
    expect(searches[0]?.body.documents[0]?.content).toMatch(/topic7/);

    // C takes jobs and never finishes them (its embedder is held), then is killed: A and B finish
    // them after their leases run out. A is held too until C has a job, so that A (where the
    // documents are posted, woken at once) does not take them all.
    held.add('a');
    held.add('c');
    embedded.clear();
    const more = Array.from({ length: 100 }, (_, i) => `Later note ${i} mentions valve${i}.`);
    const posted = Promise.all(more.map((t, i) => post(t, count + i)));
    await until('C to hold a job', async () => ((heldSeen.get('c') ?? 0) > 0 ? true : undefined), 60_000);
    c.child.kill('SIGKILL');
    release('a');
    await posted;
    await until('every document indexed after the kill', async () => ((await completed(a)) === count + more.length ? true : undefined), 150_000);
    const after = [...embedded.values()].flat().filter((t) => more.includes(t));
    expect(after.sort()).toEqual([...more].sort());
    expect(embedded.get('c') ?? []).toEqual([]);
    expect(await chunks()).toBe(count + more.length);
    expect(await chromaCount(cluster.chroma, indexName)).toBe(count + more.length);
    const stuck = await call(b, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&status=processing`);
    expect(stuck.body.total).toBe(0);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
  }, 600_000);
});
