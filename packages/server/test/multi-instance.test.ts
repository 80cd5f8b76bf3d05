import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresDatabase } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChromaServer, startChromaServer } from '../../adapters-vector/test/fixtures/chroma-server.js';
import { bagOfWords } from './helpers.js';

// Real servers: the built CLI as child processes on one private PostgreSQL database and one real
// Chroma server, requests spread over them. Embeddings come from a fake OpenAI-compatible server
// that each instance reaches under its own path (/<instance>/v1), so the test sees which
// instance embedded which text, and can hold one instance's requests unanswered.

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const SECRET = 'a-secret-every-instance-shares';
const DIMENSIONS = 32;

let chroma: ChromaServer;
let embeddings: Server;
let embeddingsUrl = '';
let root = '';
/** Texts embedded and answered, by instance. */
const embedded = new Map<string, string[]>();
/** Instances whose embedding requests are held unanswered (until the test ends). */
const held = new Set<string>();
const heldRequests: { instance: string; res: ServerResponse; answer: () => void }[] = [];

/** Answers the held requests of `instance` and stops holding its new ones. */
function release(instance: string) {
  held.delete(instance);
  for (const h of heldRequests.filter((r) => r.instance === instance)) {
    heldRequests.splice(heldRequests.indexOf(h), 1);
    h.answer();
  }
}
const heldSeen = new Map<string, number>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-multi-'));
  chroma = await startChromaServer();
  embeddings = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const instance = req.url?.split('/')[1] ?? '';
      const request = JSON.parse(body) as { input: string | string[]; encoding_format?: string };
      const input = request.input;
      const texts = Array.isArray(input) ? input : [input];
      const answer = () => {
        embedded.set(instance, [...(embedded.get(instance) ?? []), ...texts]);
        res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          object: 'list',
          model: 'fake',
          // The client asks for base64 (little-endian float32) unless told otherwise.
          data: texts.map((t, index) => {
            const vector = bagOfWords(t, DIMENSIONS);
            const embedding = request.encoding_format === 'float' ? [...vector] : Buffer.from(vector.buffer).toString('base64');
            return { object: 'embedding', index, embedding };
          }),
          usage: { prompt_tokens: texts.length, total_tokens: texts.length },
          }),
        );
      };
      if (!held.has(instance)) return answer();
      heldSeen.set(instance, (heldSeen.get(instance) ?? 0) + 1);
      heldRequests.push({ instance, res, answer });
    });
  });
  await new Promise<void>((r) => embeddings.listen(0, '127.0.0.1', r));
  const address = embeddings.address();
  embeddingsUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}, 60_000);

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const { res } of heldRequests) res.destroy();
  embeddings?.closeAllConnections();
  await new Promise((r) => embeddings?.close(r));
  await chroma?.dispose();
  await rm(root, { recursive: true, force: true });
});

interface Instance {
  readonly name: string;
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
}

/** The environment of an instance on `database` with the shared Chroma collection `indexName`. */
const sharedEnv = (name: string, database: string, indexName: string): NodeJS.ProcessEnv => ({
  AGENT_PLATFORM_DATABASE_URL: database,
  AGENT_PLATFORM_SECRET: SECRET,
  AGENT_PLATFORM_VECTOR_STORE: 'chroma',
  AGENT_PLATFORM_VECTOR_STORE_CONFIG: JSON.stringify({ endpoint: chroma.url, indexName }),
  OPENAI_BASE_URL: `${embeddingsUrl}/${name}/v1`,
  OPENAI_API_KEY: 'sk-test',
  AGENT_PLATFORM_DOCUMENT_PROCESSES: '1',
  AGENT_PLATFORM_EMBED_WORKERS: '1',
});

/** Runs `serve` with `env` (added to a clean environment), resolving when it listens, rejecting with its output when it exits first. */
function start(name: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<Instance> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', join(root, name), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', ...env },
  });
  children.push(child);
  let out = '';
  const append = (b: Buffer) => {
    out += b.toString();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out}`)), 60_000);
    child.stdout?.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ name, child, url: m[1], output: () => out });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`${name} exited ${code}:\n${out}`), { code, output: out }));
    });
  });
}

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

const firstKeyOf = (instance: Instance) => instance.output().trimEnd().split('\n').find((l) => l.startsWith('ap_'));

async function call(instance: Instance, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${instance.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The number of vectors in the Chroma collection `name` (Chroma's REST API). */
async function chromaCount(name: string): Promise<number> {
  const base = `${chroma.url}/api/v2/tenants/default_tenant/databases/default_database/collections`;
  const collection = (await (await fetch(`${base}/${name}`)).json()) as { id: string };
  return (await (await fetch(`${base}/${collection.id}/count`)).json()) as number;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
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
    expect(noStore.output).toMatch(/--vector-store qdrant\|chroma\|pinecone\|weaviate/);
    const badStore = await refusal({ AGENT_PLATFORM_SECRET: SECRET, AGENT_PLATFORM_DATABASE_URL: database }, ['--vector-store', 'builtin']);
    expect(badStore.output).toMatch(/--vector-store must be one of qdrant, chroma, pinecone, weaviate, got "builtin"/);
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
    const count = Number(process.env.MI_COUNT ?? 60);
    const texts = Array.from({ length: count }, (_, i) => `Document ${i} is about topic${i} and the word pump${i % 7}.`);
    const post = (text: string, i: number) =>
      call(a, key, 'POST', '/api/knowledge/documents', { projectId, fileName: `d${i}.txt`, fileType: 'txt', sourceType: 'text', content: text });
    // A (woken at once where the documents are posted) is held until B and C have claimed and
    // embedded documents too, so all three claim.
    held.add('a');
    const posting = Promise.all(texts.map((t, i) => post(t, i)));
    await until('B and C to embed', async () => (['b', 'c'].every((i) => (embedded.get(i)?.length ?? 0) > 0) ? true : undefined), 60_000);
    release('a');
    await posting;
    const completed = async (instance: Instance) =>
      (await call(instance, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&status=completed&limit=1`)).body.total as number;
    await until('every document indexed', async () => ((await completed(next())) === count ? true : undefined), 120_000).catch(async (error) => {
      const docs = await call(a, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&limit=100`);
      const one = await call(a, key, 'GET', `/api/knowledge/documents/${docs.body.documents[0]?.id}`);
      throw new Error(`${error.message}: ${JSON.stringify(one.body)} ${JSON.stringify([...embedded.entries()].map(([k, v]) => [k, v.length]))} ${a.output().slice(-2000)}`);
    });
    for (const instance of all) expect(await completed(instance)).toBe(count);

    // Each text embedded exactly once, and more than one instance did the work.
    const done = [...embedded.values()].flat().filter((t) => texts.includes(t));
    expect(done.sort()).toEqual([...texts].sort());
    for (const instance of ['a', 'b', 'c']) expect(embedded.get(instance)?.length, instance).toBeGreaterThan(0);
    expect(await chromaCount(indexName)).toBe(count);

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
    expect(await chromaCount(indexName)).toBe(count + more.length);
    const stuck = await call(b, key, 'GET', `/api/knowledge/documents?projectId=${projectId}&status=processing`);
    expect(stuck.body.total).toBe(0);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
  }, 400_000);
});
