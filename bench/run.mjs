// pnpm bench: each entry runs side by side with a baseline in the same run and reports ratios.
// See docs/BENCHMARKS.md for what each entry measures and the recorded figures.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentMcpAsk } from './agent-mcp.mjs';
import { startChild } from './child.mjs';
import { chromaAdapter } from './chroma-adapter.mjs';
import { completionOverhead } from './completions.mjs';
import { embedderThroughput } from './embedder.mjs';
import { fairIngestion } from './fair.mjs';
import { hostileHealth } from './hostile.mjs';
import { ingestion } from './ingest.mjs';
import { CONNECTIONS, load, median } from './load.mjs';
import { mastraSideBySide } from './mastra.mjs';
import { mcpCalls } from './mcp.mjs';
import { withStorageModes } from './modes.mjs';
import { openaiEmbedderThroughput } from './openai-embedder.mjs';
import { providerOverhead } from './providers.mjs';
import { responsesOverhead } from './responses.mjs';
import { endToEndSearch } from './search.mjs';
import { searchDuringIngest } from './search-ingest.mjs';
import { storageModes } from './storage.mjs';
import { toolRuns } from './tools.mjs';
import { vectorSearch } from './vectors.mjs';

const args = new Set(process.argv.slice(2));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 10_000);

/** The figures of one server over the rounds: medians, and ratios to bare's. */
function serverFigures(rows, side) {
  return {
    rps: median(rows.map((r) => r[side].rps)),
    p99: median(rows.map((r) => r[side].p99)),
    ratio: median(rows.map((r) => r[side].rps / r.bare.rps)),
    // CPU per request of bare ÷ this server's: the req/s ratio it would reach on a core of its own.
    cpuRatio: median(rows.map((r) => r.bare.cpuUs / r[side].cpuUs)),
    cpuUs: median(rows.map((r) => r[side].cpuUs)),
  };
}

/**
 * The list route of the real server on each storage mode (BENCH_STORAGE), against bare
 * node:http and the h3 floor answering the first mode's bytes; every server measured in turn in
 * each round.
 */
async function projectsList() {
  return withStorageModes('projects', async (modes) => {
    const path = '/api/v1/projects?limit=20';
    const servers = [];
    try {
      for (const mode of modes) {
        const platform = await mode.openPlatform();
        const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
        const started = performance.now();
        for (let i = 0; i < PROJECTS; i++) {
          await platform.createProject({ userId }, { name: `Project ${i}`, model: 'gpt-4o-mini', provider: 'openai', description: `Bench project number ${i}` });
        }
        const insertMs = performance.now() - started;
        await platform.close();
        servers.push({ mode, headers: { authorization: `Bearer ${key}` }, insertMs, child: await mode.start() });
      }
      const body = Buffer.from(await (await fetch(servers[0].child.url + path, { headers: servers[0].headers })).arrayBuffer());
      const bodyFile = join(modes[0].dir, 'body.json');
      await writeFile(bodyFile, body);
      const bare = await startChild('bare', bodyFile);
      const floor = await startChild('floor', bodyFile);
      servers.push({ bare }, { floor });

      for (const s of servers) if (s.mode) await load(s.child.url + path, s.headers); // warm-up (JIT, database caches)
      const rows = [];
      for (let round = 0; round < ROUNDS; round++) {
        const row = { bare: await load(bare.url + path, servers[0].headers, bare.pid), floor: await load(floor.url + path, servers[0].headers, floor.pid) };
        for (const s of servers) if (s.mode) row[s.mode.kind] = await load(s.child.url + path, s.headers, s.child.pid, s.mode.databasePid);
        rows.push(row);
        const ours = servers
          .filter((s) => s.mode)
          .map((s) => {
            const o = row[s.mode.kind];
            const db = o.databaseCpuUs === undefined ? '' : ` + database ${o.databaseCpuUs.toFixed(0)}`;
            return `ours on ${s.mode.label} ${o.rps.toFixed(0)} (${(o.rps / row.bare.rps).toFixed(2)}, CPU µs/request ${o.cpuUs.toFixed(0)}${db})`;
          });
        console.log(
          `  round ${round + 1}: bare ${row.bare.rps.toFixed(0)} req/s (CPU µs/request ${row.bare.cpuUs.toFixed(0)}), h3 floor ${row.floor.rps.toFixed(0)} (${(row.floor.rps / row.bare.rps).toFixed(2)}, ${row.floor.cpuUs.toFixed(0)}), ${ours.join(', ')}`,
        );
      }
      const perMode = Object.fromEntries(
        servers
          .filter((s) => s.mode)
          .map((s) => {
            const f = serverFigures(rows, s.mode.kind);
            const database = s.mode.databasePid ? { databaseCpuUs: median(rows.map((r) => r[s.mode.kind].databaseCpuUs)) } : {};
            return [s.mode.label, { insertPerSec: PROJECTS / (s.insertMs / 1000), oursRps: f.rps, oursP99: f.p99, ratio: f.ratio, cpuRatio: f.cpuRatio, oursCpuUs: f.cpuUs, ...database }];
          }),
      );
      const figures = Object.values(perMode);
      const floorFigures = serverFigures(rows, 'floor');
      return {
        name: `GET /api/v1/projects?limit=20, ${PROJECTS} projects, ${CONNECTIONS} connections (${modes.map((m) => m.label).join(' and ')})`,
        bodyBytes: body.length,
        bareRps: median(rows.map((r) => r.bare.rps)),
        floorRps: floorFigures.rps,
        floorRatio: floorFigures.ratio,
        floorCpuRatio: floorFigures.cpuRatio,
        // One mode: its figures at the top level, as before BENCH_STORAGE; both: per mode, and the lower ratio against the target.
        ...(figures.length === 1 ? figures[0] : { modes: perMode, ratio: Math.min(...figures.map((f) => f.ratio)) }),
        target: 0.25,
      };
    } finally {
      await Promise.all(servers.map((s) => (s.child ?? s.bare ?? s.floor).stop()));
    }
  });
}

const entries = {
  projects: projectsList,
  ingest: ingestion,
  vectors: vectorSearch,
  search: endToEndSearch,
  'search-ingest': searchDuringIngest,
  completions: completionOverhead,
  responses: responsesOverhead,
  providers: providerOverhead,
  tools: toolRuns,
  mcp: mcpCalls,
  'agent-mcp': agentMcpAsk,
  chroma: chromaAdapter,
  embedder: embedderThroughput,
  'openai-embedder': openaiEmbedderThroughput,
  storage: storageModes,
  hostile: hostileHealth,
  fair: fairIngestion,
  mastra: mastraSideBySide,
};
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
