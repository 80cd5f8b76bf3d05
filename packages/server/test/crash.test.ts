import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { openPlatform } from '../src/server.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function serve(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', dir], { env: { ...process.env, LOG_LEVEL: 'silent' } });
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

const article = (i: number) =>
  Array.from({ length: 40 }, (_, p) => `## Part ${p}\n\nDocument ${i} paragraph ${p} explains topic ${(i * 7 + p) % 13} in plain words. It has a second sentence too.`).join('\n\n');

it('after a SIGKILL mid-ingestion, a restart finishes or fails every document; no vector lacks its chunk', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ap-crash-'));
  dirs.push(dir);
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'keys', 'create', '--name', 'crash', '--data', dir]);
  const key = stdout.trim().split('\n').at(-1) as string;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  const first = await serve(dir);
  const project = (await (await fetch(`${first.url}/api/projects/create`, { method: 'POST', headers, body: JSON.stringify({ name: 'crash', model: 'm', provider: 'openai' }) })).json()) as {
    project: { id: string };
  };
  const projectId = project.project.id;
  for (let i = 0; i < 16; i++) {
    void fetch(`${first.url}/api/knowledge/documents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ projectId, fileName: `doc${i}.md`, fileType: 'md', sourceType: 'upload', content: article(i) }),
    }).catch(() => {});
  }
  // Kill it once some documents are done and others are not.
  const count = async (url: string, status: string) => ((await (await fetch(`${url}/api/knowledge/documents?projectId=${projectId}&status=${status}`, { headers })).json()) as { total: number }).total;
  for (let i = 0; i < 600 && (await count(first.url, 'completed')) < 1; i++) await new Promise((r) => setTimeout(r, 50));
  const unfinishedAtKill = (await count(first.url, 'pending')) + (await count(first.url, 'processing'));
  const exited = new Promise((r) => first.child.on('exit', r));
  first.child.kill('SIGKILL');
  expect(unfinishedAtKill).toBeGreaterThan(0);
  await exited;

  const second = await serve(dir);
  try {
    for (let i = 0; i < 1200; i++) {
      const unfinished = (await count(second.url, 'pending')) + (await count(second.url, 'processing'));
      if (unfinished === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const all = (await (await fetch(`${second.url}/api/knowledge/documents?projectId=${projectId}&limit=100`, { headers })).json()) as {
      documents: { id: string; status: string }[];
      total: number;
    };
    expect(all.total).toBeGreaterThan(0);
    for (const d of all.documents) expect(['completed', 'failed']).toContain(d.status);
  } finally {
    const stopped = new Promise((r) => second.child.on('exit', r));
    second.child.kill('SIGTERM');
    await stopped;
  }

  // Look inside: every completed document has its chunks; every vector has its chunk row.
  const platform = await openPlatform(dir, { knowledge: true });
  try {
    const userId = (await platform.authenticate(key))?.userId as string;
    const docs = await platform.storage.documents.list({ userId, projectId, limit: 100, offset: 0 });
    let chunks = 0;
    for (const d of docs.items) {
      const rows = await platform.storage.chunks.listByDocument(d.id);
      if (d.status === 'completed') expect(rows.length).toBe(d.chunkCount);
      chunks += rows.length;
    }
    const search = await platform.searchKnowledge({ userId }, { projectId, query: 'topic explains', topK: 100 });
    expect(search.documents.length).toBeGreaterThan(0);
    // As many vectors as chunk rows: none without its chunk, none missing.
    expect(await platform.countVectors({ userId }, projectId)).toBe(chunks);
  } finally {
    await platform.close();
  }
}, 180_000);
