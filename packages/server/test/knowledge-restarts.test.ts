import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { afterAll, expect, it } from 'vitest';

// Indexing jobs across restarts of the built server (real processes, SQLite, the reader
// processes of dist): a job is counted before it runs, so one whose runs keep ending with the
// process is given up after 3 starts instead of running at every start forever; and a document
// whose reader was killed for a limit fails at once and is not read again.

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function dataFolder(): Promise<{ dir: string; key: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-restarts-'));
  dirs.push(dir);
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'keys', 'create', '--name', 'restarts', '--data', dir]);
  return { dir, key: stdout.trim().split('\n').at(-1) as string };
}

function serve(dir: string, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', dir], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

/** The processes whose parent is `pid` (Linux). */
const childrenOf = (pid: number | undefined): number[] =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return new RegExp(`^PPid:\\s+${pid}$`, 'm').test(readFileSync(`/proc/${p}/status`, 'utf8'));
      } catch {
        return false;
      }
    })
    .map(Number);
/** Running (an exited process left for its new parent to reap, a zombie, is not). */
const alive = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

function client(url: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) =>
    (
      await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    ).json() as Promise<any>;
  const document = async (id: string) => (await call('GET', `/api/knowledge/documents/${id}`)).document;
  const until = async (id: string, done: (d: { status: string }) => boolean) => {
    for (let i = 0; i < 1200; i++) {
      const d = await document(id);
      if (done(d)) return d;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`document ${id} never got there`);
  };
  return { call, document, until };
}

it('gives up a job whose runs keep ending with the server: failed at the 4th start, not run again', async () => {
  const { dir, key } = await dataFolder();
  let server = await serve(dir);
  let api = client(server.url, key);
  const projectId = (await api.call('POST', '/api/projects/create', { name: 'p', model: 'm', provider: 'openai' })).project.id;
  // Thousands of chunks of 16 tokens: minutes for the built-in embedder, so each run is still
  // going when its server is killed.
  await api.call('PUT', '/api/knowledge/settings', { projectId, settings: { chunkSize: 16, chunkOverlap: 0 } });
  const content = Array.from({ length: 3000 }, (_, i) => `Sentence ${i} says something new about pumps.`).join(' ');
  const { documentId } = await api.call('POST', '/api/knowledge/documents', { projectId, fileName: 'long.txt', fileType: 'txt', sourceType: 'upload', content });
  for (let start = 1; start <= 3; start++) {
    await api.until(documentId, (d) => d.status === 'processing');
    const readers = childrenOf(server.child.pid);
    const exited = new Promise((r) => server.child.on('exit', r));
    server.child.kill('SIGKILL');
    await exited;
    // The server's reader processes go with it.
    for (let i = 0; i < 100 && readers.some(alive); i++) await new Promise((r) => setTimeout(r, 20));
    expect(readers.filter(alive)).toEqual([]);
    server = await serve(dir);
    api = client(server.url, key);
  }
  try {
    const failed = await api.until(documentId, (d) => d.status === 'failed' || d.status === 'completed');
    expect(failed).toMatchObject({ status: 'failed', error: 'Failed to index document: indexing was started 3 times without finishing, over the limit of 3 attempts', chunkCount: 0 });
  } finally {
    const exited = new Promise((r) => server.child.on('exit', r));
    server.child.kill('SIGTERM');
    await exited;
  }
}, 240_000);

it('fails a document whose reader was killed at the time limit (set by env) once: a restart does not read it again', async () => {
  const { dir, key } = await dataFolder();
  const env = { AGENT_PLATFORM_DOCUMENT_TIMEOUT_MS: '200' };
  let server = await serve(dir, env);
  let api = client(server.url, key);
  try {
    const projectId = (await api.call('POST', '/api/projects/create', { name: 'p', model: 'm', provider: 'openai' })).project.id;
    const content = '. '.repeat(4 * 1024 * 1024);
    const { documentId } = await api.call('POST', '/api/knowledge/documents', { projectId, fileName: 'dots.md', fileType: 'md', sourceType: 'upload', content });
    const failed = await api.until(documentId ?? (await api.call('GET', `/api/knowledge/documents?projectId=${projectId}`)).documents[0].id, (d) => d.status === 'failed');
    expect(failed.error).toBe('Failed to index document: parsing and chunking the document did not end in time, over the limit of 200 ms (--document-timeout)');
    // A small document still indexes: the killed reader was replaced.
    const ok = await api.call('POST', '/api/knowledge/documents', { projectId, fileName: 'ok.txt', fileType: 'txt', sourceType: 'upload', content: 'Still indexing.' });
    expect(await api.until(ok.documentId, (d) => d.status !== 'processing' && d.status !== 'pending')).toMatchObject({ status: 'completed' });

    const exited = new Promise((r) => server.child.on('exit', r));
    server.child.kill('SIGTERM');
    await exited;
    server = await serve(dir, env);
    api = client(server.url, key);
    await new Promise((r) => setTimeout(r, 500));
    expect(await api.document(failed.id)).toMatchObject({ status: 'failed', updatedAt: failed.updatedAt });
  } finally {
    const exited = new Promise((r) => server.child.on('exit', r));
    server.child.kill('SIGTERM');
    await exited;
  }
}, 240_000);

it('a re-index killed mid-way is resumed by the restarted server: search answers the old chunks or the new ones, never a mix, and no vector is left behind', async () => {
  const { dir, key } = await dataFolder();
  let server = await serve(dir);
  let api = client(server.url, key);
  let chunkCount = -1;
  const stop = async () => {
    const exited = new Promise((r) => server.child.on('exit', r));
    server.child.kill('SIGTERM');
    await exited;
  };
  try {
    const projectId = (await api.call('POST', '/api/projects/create', { name: 'p', model: 'm', provider: 'openai' })).project.id;
    await api.call('PUT', '/api/knowledge/settings', { projectId, settings: { chunkSize: 512, chunkOverlap: 0 } });
    const content = Array.from({ length: 200 }, (_, i) => `Sentence ${i} says how gravel pumps ${i} are serviced.`).join(' ');
    const { documentId } = await api.call('POST', '/api/knowledge/documents', { projectId, fileName: 'pumps.txt', fileType: 'txt', sourceType: 'upload', content });
    const before = await api.until(documentId, (d) => d.status === 'completed');
    const search = async () => (await api.call('POST', '/api/knowledge/search', { projectId, query: 'gravel pumps serviced', topK: 20 })).documents as { content: string }[];
    const oldTexts = new Set((await search()).map((h) => h.content));
    expect(oldTexts.size).toBe(before.chunkCount);

    expect((await api.call('PUT', '/api/knowledge/settings', { projectId, settings: { chunkSize: 16 } })).reindex).toBe('suggested');
    expect(await api.call('POST', '/api/knowledge/reindex', { projectId })).toMatchObject({ success: true, queued: 1 });
    await api.until(documentId, (d) => d.status === 'processing');
    await new Promise((r) => setTimeout(r, 500));
    const exited = new Promise((r) => server.child.on('exit', r));
    server.child.kill('SIGKILL');
    await exited;

    server = await serve(dir);
    api = client(server.url, key);
    // Until the resumed run writes, the old chunks answer; after, the new ones; never both.
    for (let doc = await api.document(documentId); doc.status !== 'completed'; doc = await api.document(documentId)) {
      expect(doc.status).not.toBe('failed');
      const hits = await search();
      expect(hits.length).toBeGreaterThan(0);
      const old = hits.filter((h) => oldTexts.has(h.content)).length;
      expect([0, hits.length]).toContain(old);
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = await api.document(documentId);
    chunkCount = after.chunkCount;
    expect(after).toMatchObject({ status: 'completed', error: null });
    expect(after.chunkCount).toBeGreaterThan(before.chunkCount * 5);
    expect(after.vectorCount).toBe(after.chunkCount);
    const hits = await search();
    expect(hits.some((h) => oldTexts.has(h.content))).toBe(false);
    expect(hits[0]?.content.length).toBeLessThan(100);
  } finally {
    await stop();
  }
  // The store holds exactly the document's current vectors: nothing from the killed run or the old chunks.
  const store = await builtinVectorStore({ dir: join(dir, 'vectors') });
  try {
    const namespaces = readdirSync(join(dir, 'vectors')).filter((f) => f.endsWith('.json'));
    expect(namespaces).toHaveLength(1);
    const { namespace } = JSON.parse(readFileSync(join(dir, 'vectors', namespaces[0] as string), 'utf8')) as { namespace: string };
    expect(await store.count(namespace)).toBe(chunkCount);
  } finally {
    await store.close();
  }
}, 240_000);
