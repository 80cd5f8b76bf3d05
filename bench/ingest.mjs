// Ingestion: chunks per second end to end through HTTP (POST /api/knowledge/documents until
// every document is completed), against the raw built-in embedder (its default pool of worker
// threads, every worker warm) embedding the same chunk texts in one call, its fastest use, in
// the same run. Corpus: the first BENCH_INGEST_DOCS abstracts of BEIR SciFact
// (bench/data/beir-scifact-5k). The client keeps BENCH_INGEST_INFLIGHT requests in flight
// (default 32): the route answers when the document is indexed (or after 5 s), so the
// requests in flight bound the documents the server has to work on, and a bulk loader keeps
// many; with 8 the server holds 8 documents and its embedder runs batches of one or two.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { chunkDocument, parseDocument } from '@agent-platform/core/internal';
import { openPlatform } from '@agent-platform/server';
import { startChild } from './child.mjs';
import { machineBusySeconds } from './embedder.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));

export async function loadCorpus(limit) {
  const lines = (await readFile(join(here, 'data/beir-scifact-5k/corpus.jsonl'), 'utf8')).trim().split('\n');
  return lines.slice(0, limit).map((line) => {
    const d = JSON.parse(line);
    return { id: d._id, text: `${d.title}\n\n${d.text}` };
  });
}

const INFLIGHT = Number(process.env.BENCH_INGEST_INFLIGHT ?? 32);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * CPU seconds so far of the bench's server child (Linux /proc; undefined elsewhere): its main
 * thread, and all its other threads (the embedder's workers, V8 and libuv helpers).
 */
function serverCpu() {
  try {
    const fields = (path) => {
      const stat = readFileSync(path, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    };
    const child = readdirSync('/proc').find((p) => /^\d+$/.test(p) && fields(`/proc/${p}/stat`)[1] === String(process.pid) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('servers.mjs'));
    if (!child) return undefined;
    const cpu = { main: 0, other: 0 };
    for (const task of readdirSync(`/proc/${child}/task`)) {
      const f = fields(`/proc/${child}/task/${task}/stat`);
      cpu[task === child ? 'main' : 'other'] += (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in ticks of 10 ms
    }
    return cpu;
  } catch {
    return undefined;
  }
}
const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

export async function ingestion() {
  const count = Number(process.env.BENCH_INGEST_DOCS ?? 300);
  const rounds = Number(process.env.BENCH_INGEST_ROUNDS ?? 3);
  const corpus = await loadCorpus(count);

  // Raw embedder on the same chunks the pipeline makes (default chunkSize 512, overlap 64).
  const texts = [];
  for (const d of corpus) {
    const parsed = await parseDocument({ bytes: new TextEncoder().encode(d.text), fileName: `${d.id}.txt` });
    for (const c of chunkDocument(parsed, { chunkSize: 512, chunkOverlap: 64 })) texts.push(c.text);
  }
  const embedder = builtinEmbedder();
  await embedder.embed(texts.slice(0, 32)); // up to 4 batches of 8: every worker of the pool started and warm

  // The same documents through HTTP: a real server, one fresh project per round (and one for
  // the queries-while-indexing phase), so every round indexes (and embeds) everything again.
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-ingest-'));
  try {
    const platform = await openPlatform(dir);
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const projects = [];
    for (let i = 0; i <= rounds; i++) projects.push((await platform.createProject({ userId }, { name: `ingest ${i}`, model: 'm', provider: 'openai' })).project.id);
    await platform.close();
    const server = await startChild('ours', dir);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const search = async (projectId, query) => {
      const res = await fetch(`${server.url}/api/knowledge/search`, { method: 'POST', headers, body: JSON.stringify({ projectId, query }) });
      if (!res.ok) throw new Error(`search answered ${res.status}: ${await res.text()}`);
    };
    // Warm the server's embedder: concurrent queries start its workers (each one that finds the
    // others busy starts another, up to the pool size).
    await Promise.all(Array.from({ length: 4 }, () => search(projects[0], 'warm up')));
    // And its document reader: the first document starts the reader process (about 0.9 s of CPU,
    // once per server) and warms its tokenizer, as the raw side's embedder was warmed above.
    const warm = await fetch(`${server.url}/api/knowledge/documents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ projectId: projects[0], fileName: 'warm.txt', fileType: 'txt', sourceType: 'upload', content: corpus[0].text }),
    });
    if (!warm.ok) throw new Error(`warm-up answered ${warm.status}: ${await warm.text()}`);

    /** Posts every document (BENCH_INGEST_INFLIGHT requests in flight) and waits until all are completed; seconds. */
    const completed = async (projectId) => (await (await fetch(`${server.url}/api/knowledge/documents?projectId=${projectId}&status=completed&limit=1`, { headers })).json()).total;
    const ingestHttp = async (projectId, docs) => {
      // The project may hold documents already (the warm-up's): wait for these on top of them.
      const before = await completed(projectId);
      const t = performance.now();
      let next = 0;
      const post = async () => {
        while (next < docs.length) {
          const d = docs[next++];
          const res = await fetch(`${server.url}/api/knowledge/documents`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ projectId, fileName: `${d.id}.txt`, fileType: 'txt', sourceType: 'upload', content: d.text }),
          });
          if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
        }
      };
      await Promise.all(Array.from({ length: INFLIGHT }, post));
      while ((await completed(projectId)) < before + docs.length) await new Promise((r) => setTimeout(r, 50));
      return (performance.now() - t) / 1000;
    };
    const chunkCount = async (projectId) => {
      let chunks = 0;
      for (let offset = 0; offset < corpus.length; offset += 100) {
        const page = await (await fetch(`${server.url}/api/knowledge/documents?projectId=${projectId}&limit=100&offset=${offset}`, { headers })).json();
        chunks += page.documents.reduce((s, d) => s + d.chunkCount, 0);
      }
      return chunks;
    };

    // Rounds alternate which side goes first.
    const rows = [];
    for (let round = 0; round < rounds; round++) {
      const row = {};
      const sides = {
        raw: async () => {
          const cpu = cpuSeconds();
          const machine = machineBusySeconds();
          const t = performance.now();
          await embedder.embed(texts);
          const seconds = (performance.now() - t) / 1000;
          row.raw = texts.length / seconds;
          row.rawCores = (cpuSeconds() - cpu) / seconds;
          row.rawOthers = Math.max(0, (machineBusySeconds() - machine) / seconds - row.rawCores);
        },
        http: async () => {
          const projectId = projects[round + 1];
          const cpu = serverCpu();
          const bench = cpuSeconds();
          const machine = machineBusySeconds();
          const seconds = await ingestHttp(projectId, corpus);
          const after = serverCpu();
          const machineCores = (machineBusySeconds() - machine) / seconds;
          const benchCores = (cpuSeconds() - bench) / seconds;
          row.http = (await chunkCount(projectId)) / seconds;
          if (cpu && after) {
            row.server = { main: (after.main - cpu.main) / seconds, other: (after.other - cpu.other) / seconds };
            row.client = benchCores;
            row.httpOthers = Math.max(0, machineCores - benchCores - row.server.main - row.server.other);
          }
        },
      };
      const order = round % 2 === 0 ? ['raw', 'http'] : ['http', 'raw'];
      for (const side of order) await sides[side]();
      rows.push(row);
      const server = row.server
        ? ` (server: main thread ${row.server.main.toFixed(2)} cores, other threads ${row.server.other.toFixed(2)}; bench client ${row.client.toFixed(2)}; others ${row.httpOthers.toFixed(2)})`
        : '';
      console.log(
        `  round ${round + 1} (${order.join(', ')}): raw embedder ${row.raw.toFixed(1)} chunks/s (${row.rawCores.toFixed(2)} cores; others ${row.rawOthers.toFixed(2)}), HTTP ${row.http.toFixed(1)} chunks/s${server}, ratio ${(row.http / row.raw).toFixed(2)}`,
      );
    }
    await embedder.close();

    // Search latency while documents are being indexed: a query every 250 ms during the ingest of 100 documents.
    const during = [];
    const indexing = ingestHttp(projects[0], corpus.slice(0, 100));
    let done = false;
    indexing.then(() => {
      done = true;
    });
    for (let i = 0; !done; i++) {
      await new Promise((r) => setTimeout(r, 250));
      const t = performance.now();
      await search(projects[0], `question ${i} about cell biology`);
      during.push(performance.now() - t);
    }
    await indexing;
    await server.stop();

    return {
      name: `ingestion of ${corpus.length} SciFact abstracts (${texts.length} chunks), ${rounds} rounds`,
      rawEmbedderChunksPerSec: median(rows.map((r) => r.raw)),
      httpChunksPerSec: median(rows.map((r) => r.http)),
      rawCores: median(rows.map((r) => r.rawCores)),
      ...(rows.every((r) => r.server) ? { serverMainThreadCores: median(rows.map((r) => r.server.main)), serverOtherThreadsCores: median(rows.map((r) => r.server.other)) } : {}),
      searchDuringIngestP50Ms: median(during),
      searchDuringIngestMaxMs: Math.max(...during),
      // HTTP / raw, per round, median.
      ratio: median(rows.map((r) => r.http / r.raw)),
      target: 0.85,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
