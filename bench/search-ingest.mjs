// Knowledge search while documents are being ingested: `POST /api/knowledge/search` p50 on a
// real server (child process, built-in embedder; SQLite and the built-in store, or PostgreSQL
// mode and Chroma, or both, by BENCH_STORAGE: bench/modes.mjs) with nothing else to do
// (idle), then while BENCH_SEARCH_INGEST_DOCS SciFact abstracts (default 32) are posted with
// 32 requests in flight to another project (busy), then idle again; the ratio is busy / idle
// (the median of the two idle series). One query at a time, a new one as soon as the last is
// answered. The searched project holds 20 abstracts. With both modes each phase runs on one
// mode's server, then on the other's (both servers up all along).
import { loadCorpus } from './ingest.mjs';
import { percentile } from './load.mjs';
import { withStorageModes } from './modes.mjs';

const round = (ms) => Math.round(ms * 10) / 10;

/** One mode's server, its three projects (searched, bulk 1, bulk 2), and its search and ingest. */
async function serveMode(mode) {
  const platform = await mode.openPlatform();
  const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
  const create = async (name) => (await platform.createProject({ userId }, { name, model: 'm', provider: 'openai' })).project.id;
  const projects = [await create('searched'), await create('bulk 1'), await create('bulk 2')];
  await platform.close();
  const server = await mode.start();
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
    const res = await fetch(`${server.url}/api/knowledge/search`, { method: 'POST', headers, body: JSON.stringify({ projectId: projects[0], query: `question ${q++} about cell biology` }) });
    if (!res.ok) throw new Error(`search answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    return performance.now() - t;
  };
  const idleSeries = async (n) => {
    const xs = [];
    for (let i = 0; i < n; i++) xs.push(await search());
    return xs;
  };
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
  return { mode, server, projects, ingest, idleSeries, busySeries, idle: [], busy: [] };
}

export async function searchDuringIngest() {
  const count = Number(process.env.BENCH_SEARCH_INGEST_DOCS ?? 32);
  const corpus = await loadCorpus(20 + count * 2);
  return withStorageModes('search-ingest', async (modes) => {
    const runs = [];
    try {
      for (const mode of modes) runs.push(await serveMode(mode));
      for (const r of runs) {
        await r.ingest(r.projects[0], corpus.slice(0, 20));
        await r.idleSeries(10); // warm-up
      }
      // Idle, busy, idle, busy; with both modes each phase runs on one mode, then on the other.
      for (const bulk of [1, 2]) {
        for (const r of runs) r.idle.push(...(await r.idleSeries(40)));
        const docs = corpus.slice(20 + (bulk - 1) * count, 20 + bulk * count);
        for (const r of runs) r.busy.push(...(await r.busySeries(r.projects[bulk], docs)));
      }
      const figures = runs.map(({ idle, busy }) => ({
        idleP50: round(percentile(idle, 50)),
        idleP99: round(percentile(idle, 99)),
        busyP50: round(percentile(busy, 50)),
        busyP99: round(percentile(busy, 99)),
        busyQueries: busy.length,
        ratio: round(percentile(busy, 50) / percentile(idle, 50)),
      }));
      return {
        name: `knowledge search p50 while ${count} documents are ingested vs idle (ms, one query at a time; ${modes.map((m) => m.label).join(' and ')})`,
        // One mode: as before BENCH_STORAGE; both: per mode, and the higher ratio.
        ...(figures.length === 1 ? figures[0] : { modes: Object.fromEntries(runs.map((r, i) => [r.mode.label, figures[i]])), ratio: Math.max(...figures.map((f) => f.ratio)) }),
        target: 'busy p50 <= 2x idle p50',
      };
    } finally {
      for (const r of runs) await r.server.stop();
    }
  });
}
