// Helpers the HTTP entries share: autocannon load on one server with its CPU per request, a
// bounded pool of requests in flight, and the statistics the entries report.
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/** Seconds per autocannon measurement (BENCH_DURATION, default 10). */
export const DURATION = Number(process.env.BENCH_DURATION ?? 10);
/** Connections autocannon keeps open (BENCH_CONNECTIONS, default 10). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

/** The median of `xs` (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** The `p`th percentile of `xs` (nearest rank, p in 0..100). */
export const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** CPU time (user + system) a process has used, in ms, from /proc (Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

/** CPU time in ms of a process's children (PostgreSQL's backends are the postmaster's), those alive now. */
function childrenCpuMs(pid) {
  let sum = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) === pid) sum += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {} // ended meanwhile
  }
  return sum;
}

/**
 * Load on one server: req/s, p99 (ms), and the server process's CPU per request (µs, when `pid`
 * is given), which moves far less than req/s when other processes take the cores; with
 * `databasePid` (PostgreSQL mode's postmaster) also the database's CPU per request (its
 * backends'), which SQLite mode spends inside the server process. Any non-2xx answer or socket
 * error fails the measurement.
 */
export async function load(url, headers, pid, databasePid) {
  const before = pid ? cpuMs(pid) : 0;
  const dbBefore = databasePid ? childrenCpuMs(databasePid) : 0;
  const result = await autocannon({ url, headers, connections: CONNECTIONS, pipelining: 1, duration: DURATION });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const perRequest = (ms) => (ms * 1000) / result.requests.total;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    cpuUs: pid ? perRequest(cpuMs(pid) - before) : undefined,
    ...(databasePid ? { databaseCpuUs: perRequest(childrenCpuMs(databasePid) - dbBefore) } : {}),
  };
}

/** Runs `fn(i)` for i < n with `concurrency` in flight; answers the results in order of i. */
export async function pool(n, concurrency, fn) {
  const out = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}
