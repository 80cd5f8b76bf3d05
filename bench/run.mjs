// pnpm bench: each entry runs side by side with a baseline in the same run and reports ratios.
// See docs/BENCHMARKS.md for what each entry measures and the recorded figures.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPlatform } from '@agent-platform/server';
import { startChild } from './child.mjs';
import { CONNECTIONS, load, median } from './load.mjs';
import { ingestion } from './ingest.mjs';
import { embedderThroughput } from './embedder.mjs';
import { completionOverhead } from './completions.mjs';
import { endToEndSearch } from './search.mjs';
import { searchDuringIngest } from './search-ingest.mjs';
import { toolRuns } from './tools.mjs';
import { mcpCalls } from './mcp.mjs';
import { chromaAdapter } from './chroma-adapter.mjs';
import { vectorSearch } from './vectors.mjs';
import { storageModes } from './storage.mjs';
import { hostileHealth } from './hostile.mjs';
import { mastraSideBySide } from './mastra.mjs';

const args = new Set(process.argv.slice(2));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 10_000);

async function projectsList() {
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-'));
  try {
    const platform = await openPlatform(dir);
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const started = performance.now();
    for (let i = 0; i < PROJECTS; i++) {
      await platform.createProject({ userId }, { name: `Project ${i}`, model: 'gpt-4o-mini', provider: 'openai', description: `Bench project number ${i}` });
    }
    const insertMs = performance.now() - started;
    await platform.storage.close();

    const ours = await startChild('ours', dir);
    const path = '/api/v1/projects?limit=20';
    const headers = { authorization: `Bearer ${key}` };
    const body = Buffer.from(await (await fetch(ours.url + path, { headers })).arrayBuffer());
    const bodyFile = join(dir, 'body.json');
    await writeFile(bodyFile, body);
    const bare = await startChild('bare', bodyFile);
    const floor = await startChild('floor', bodyFile);

    await load(ours.url + path, headers); // warm-up (JIT, SQLite page cache)
    const rows = [];
    for (let round = 0; round < ROUNDS; round++) {
      const b = await load(bare.url + path, headers, bare.pid);
      const f = await load(floor.url + path, headers, floor.pid);
      const o = await load(ours.url + path, headers, ours.pid);
      rows.push({ bare: b, floor: f, ours: o, ratio: o.rps / b.rps });
      console.log(
        `  round ${round + 1}: bare ${b.rps.toFixed(0)} req/s, h3 floor ${f.rps.toFixed(0)} (${(f.rps / b.rps).toFixed(2)}), ours ${o.rps.toFixed(0)} (${(o.rps / b.rps).toFixed(2)}); CPU µs/request bare ${b.cpuUs.toFixed(0)}, floor ${f.cpuUs.toFixed(0)}, ours ${o.cpuUs.toFixed(0)}`,
      );
    }
    await Promise.all([ours.stop(), bare.stop(), floor.stop()]);
    return {
      name: `GET /api/v1/projects?limit=20, ${PROJECTS} projects, ${CONNECTIONS} connections (SQLite)`,
      insertPerSec: PROJECTS / (insertMs / 1000),
      bodyBytes: body.length,
      bareRps: median(rows.map((r) => r.bare.rps)),
      floorRps: median(rows.map((r) => r.floor.rps)),
      floorRatio: median(rows.map((r) => r.floor.rps / r.bare.rps)),
      oursRps: median(rows.map((r) => r.ours.rps)),
      oursP99: median(rows.map((r) => r.ours.p99)),
      ratio: median(rows.map((r) => r.ratio)),
      // CPU per request of bare ÷ ours: the req/s ratio a server would reach on a core of its own.
      cpuRatio: median(rows.map((r) => r.bare.cpuUs / r.ours.cpuUs)),
      floorCpuRatio: median(rows.map((r) => r.bare.cpuUs / r.floor.cpuUs)),
      oursCpuUs: median(rows.map((r) => r.ours.cpuUs)),
      target: 0.25,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const entries = { projects: projectsList, ingest: ingestion, vectors: vectorSearch, search: endToEndSearch, 'search-ingest': searchDuringIngest, completions: completionOverhead, tools: toolRuns, mcp: mcpCalls, chroma: chromaAdapter, embedder: embedderThroughput, storage: storageModes, hostile: hostileHealth, mastra: mastraSideBySide };
// Entries that run only when named: `mastra` installs a peer (about 250 MB from npm) on first use.
const optIn = new Set(['mastra']);
const selected = Object.keys(entries).filter((name) => (args.size === 0 ? !optIn.has(name) : args.has(name)));
if (args.size === 0) console.log(`bench: every entry but ${[...optIn].join(', ')} (opt-in: name it, e.g. \`pnpm bench mastra\`)`);
const results = [];
for (const name of selected) {
  console.log(`bench ${name}`);
  const r = await entries[name]();
  results.push(r);
  console.log(JSON.stringify(r, null, 2));
  // Ratios are throughput ratios (higher is better) unless the entry says lowerIsBetter (latency).
  if (r.ratio !== undefined && (r.lowerIsBetter ? r.ratio > r.target : r.ratio < r.target)) {
    console.log(`  MISSED TARGET: ratio ${r.ratio.toFixed(2)} ${r.lowerIsBetter ? '>' : '<'} ${r.target}`);
  }
}
