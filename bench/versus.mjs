// pnpm bench:versus <dir>: this checkout's server against the server of another built checkout
// (e.g. a git worktree at an earlier commit: `git worktree add /tmp/before <commit> && cd
// /tmp/before && pnpm install && pnpm build`), side by side in one run, for a change that must
// not make the server slower:
//   list         GET /api/v1/projects?limit=20 over 2,000 projects: req/s and p99 under load
//                (autocannon, BENCH_DURATION s per side), the two servers in turn, BENCH_ROUNDS rounds;
//   plain, agent streaming chat completions on a loopback upstream (bench/upstream.mjs), a plain
//                model name and a project: time to first token and total, p50/p99, the two
//                servers interleaved request by request (BENCH_COMPLETIONS requests per side).
// Both servers run on SQLite, each with its own data folder, as child processes; ratios are
// this checkout's figure ÷ the other's. CPU per request (the server process's user + system time)
// is reported beside the times: on a busy machine it moves far less than req/s or latency.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerScript } from './child.mjs';
import { interleaved, streamOnce } from './completions.mjs';
import { cpuMs, load, median } from './load.mjs';
import { startBenchUpstream } from './upstream.mjs';

const other = process.argv[2];
if (!other) throw new Error('usage: node bench/versus.mjs <dir of another built checkout>');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 2000);
const COMPLETIONS = Number(process.env.BENCH_COMPLETIONS ?? 200);
// BENCH_VERSUS_THIS: measure another built checkout as `this` (default: the checkout of this script).
const here = resolve(process.env.BENCH_VERSUS_THIS || resolve(fileURLToPath(import.meta.url), '../..'));

async function post(url, headers, body) {
  const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** A server of checkout `dir` on a fresh data folder, its key, and a project (the agent) among PROJECTS. */
async function serve(name, dir, upstream) {
  const dataDir = await mkdtemp(join(tmpdir(), `ap-versus-${name}-`));
  const child = await startServerScript(join(dir, 'bench/servers.mjs'), 'ours', dataDir, { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' });
  const headers = { authorization: `Bearer ${child.firstKey}` };
  let agent;
  for (let i = 0; i < PROJECTS; i++) {
    const { project } = await post(`${child.url}/api/projects/create`, headers, { name: `Project ${i}`, model: 'gpt-bench', provider: 'openai' });
    agent ??= project.id;
  }
  return { name, child, headers, agent, dataDir };
}

const upstream = await startBenchUpstream({ words: 20 });
const sides = [];
try {
  sides.push(await serve('this', here, upstream), await serve('other', resolve(other), upstream));
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const row = {};
    for (const s of r % 2 === 0 ? sides : [...sides].reverse()) row[s.name] = await load(`${s.child.url}/api/v1/projects?limit=20`, s.headers, s.child.pid);
    rounds.push(row);
  }
  const list = Object.fromEntries(
    sides.map((s) => [
      s.name,
      { rps: Math.round(median(rounds.map((x) => x[s.name].rps))), p99: median(rounds.map((x) => x[s.name].p99)), cpuUs: Math.round(median(rounds.map((x) => x[s.name].cpuUs))) },
    ]),
  );
  const ask = { messages: [{ role: 'user', content: 'Hello' }], stream: true };
  // CPU each server spent per completion (its process's user + system time over the run ÷ its requests,
  // warm-ups included): steadier than times on a busy machine.
  const cpuBefore = Object.fromEntries(sides.map((s) => [s.name, cpuMs(s.child.pid)]));
  const completions = await interleaved(
    COMPLETIONS,
    Object.fromEntries(
      sides.flatMap((s) => [
        [`${s.name} plain`, () => streamOnce(`${s.child.url}/api/v1/chat/completions`, s.headers, { model: 'gpt-bench', ...ask })],
        [`${s.name} agent`, () => streamOnce(`${s.child.url}/api/v1/chat/completions`, s.headers, { model: s.agent, ...ask })],
      ]),
    ),
  );
  const perCompletion = Object.fromEntries(sides.map((s) => [s.name, Math.round(((cpuMs(s.child.pid) - cpuBefore[s.name]) * 1000) / (2 * (COMPLETIONS + 5)))]));
  const ratio = (a, b) => Math.round((a / b) * 100) / 100;
  const result = {
    other: resolve(other),
    list: { ...list, rpsRatio: ratio(list.this.rps, list.other.rps), cpuRatio: ratio(list.this.cpuUs, list.other.cpuUs) },
    completions,
    completionCpuUs: { ...perCompletion, ratio: ratio(perCompletion.this, perCompletion.other) },
    ttftP50Ratio: {
      plain: ratio(completions['this plain'].ttft.p50, completions['other plain'].ttft.p50),
      agent: ratio(completions['this agent'].ttft.p50, completions['other agent'].ttft.p50),
    },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  for (const s of sides) {
    await s.child.stop();
    await rm(s.dataDir, { recursive: true, force: true });
  }
  await upstream.close?.();
}
