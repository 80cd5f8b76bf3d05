// Knowledge search while documents are being ingested: `POST /api/knowledge/search` p50 on a
// real server (child process, SQLite, built-in store and embedder) with nothing else to do
// (idle), then while BENCH_SEARCH_INGEST_DOCS SciFact abstracts (default 32) are posted with
// 32 requests in flight to another project (busy), then idle again; the ratio is busy / idle
// (the median of the two idle series). One query at a time, a new one as soon as the last is
// answered. The searched project holds 20 abstracts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPlatform } from '@agent-platform/server';
import { startChild } from './child.mjs';
import { loadCorpus } from './ingest.mjs';

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const round = (ms) => Math.round(ms * 10) / 10;

export async function searchDuringIngest() {
  const count = Number(process.env.BENCH_SEARCH_INGEST_DOCS ?? 32);
  const corpus = await loadCorpus(20 + count * 2);
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-search-ingest-'));
  try {
    const platform = await openPlatform(dir);
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const create = async (name) => (await platform.createProject({ userId }, { name, model: 'm', provider: 'openai' })).project.id;
    const [searched, bulk1, bulk2] = [await create('searched'), await create('bulk 1'), await create('bulk 2')];
    await platform.close();
    const server = await startChild('ours', dir);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = async (projectId, d) => {
      const res = await fetch(`${server.url}/api/knowledge/documents`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ projectId, fileName: `${d.id}.txt`, fileType: 'txt', sourceType: 'upload', content: d.text }),
      });
      if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    };
    const ingest = async (projectId, docs) => {
      let next = 0;
      const worker = async () => {
        while (next < docs.length) await post(projectId, docs[next++]);
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      for (;;) {
        const list = await (await fetch(`${server.url}/api/knowledge/documents?projectId=${projectId}&status=completed&limit=1`, { headers })).json();
        if (list.total === docs.length) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    let q = 0;
    const search = async () => {
      const t = performance.now();
      const res = await fetch(`${server.url}/api/knowledge/search`, { method: 'POST', headers, body: JSON.stringify({ projectId: searched, query: `question ${q++} about cell biology` }) });
      if (!res.ok) throw new Error(`search answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      return performance.now() - t;
    };
    await ingest(searched, corpus.slice(0, 20));
    const idleSeries = async (n) => {
      const xs = [];
      for (let i = 0; i < n; i++) xs.push(await search());
      return xs;
    };
    await idleSeries(10); // warm-up
    const busySeries = async (projectId, docs) => {
      const xs = [];
      let done = false;
      const indexing = ingest(projectId, docs).finally(() => {
        done = true;
      });
      while (!done) xs.push(await search());
      await indexing;
      return xs;
    };
    const idle1 = await idleSeries(40);
    const busy1 = await busySeries(bulk1, corpus.slice(20, 20 + count));
    const idle2 = await idleSeries(40);
    const busy2 = await busySeries(bulk2, corpus.slice(20 + count, 20 + count * 2));
    await server.stop();
    const idle = [...idle1, ...idle2];
    const busy = [...busy1, ...busy2];
    return {
      name: `knowledge search p50 while ${count} documents are ingested vs idle (ms, one query at a time)`,
      idleP50: round(percentile(idle, 50)),
      idleP99: round(percentile(idle, 99)),
      busyP50: round(percentile(busy, 50)),
      busyP99: round(percentile(busy, 99)),
      busyQueries: busy.length,
      ratio: round(percentile(busy, 50) / percentile(idle, 50)),
      target: 'busy p50 <= 2x idle p50',
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
