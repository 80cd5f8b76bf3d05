// pnpm bench:relevance-floor — whether knowledge scores mean what they say: the data behind the
// agent's default relevance floor (AGENT_MIN_SCORE in @agent-platform/core, docs/AGENT.md
// "Relevance floor") and the search quality it must not cost, all through HTTP against the real
// server (startServer, built-in embedder and vector store, SQLite), with the chat model a
// loopback OpenAI-compatible fake (bench/upstream.mjs).
//
// Two servers: one on the BEIR SciFact data folder `pnpm bench:retrieval` ingests (5,000
// abstracts, chunk 512: .bench-data/retrieval/c512-o64; ingested here when missing), one on a
// fresh folder with a small shop project (refunds, shipping, warranty: the defect's case, a
// knowledge base that most questions have nothing to do with). Questions:
//
// - claims: SciFact's 300 claims, asked of the SciFact project (each has abstracts judged
//   relevant: the agent should attach sources);
// - everyday: bench/data/everyday-questions/questions.tsv (jokes, poems, weather, definitions of
//   everyday things, small talk, cooking, travel, sport, trivia; no abstract answers them: the
//   agent should attach none), asked of both projects; the claims are unrelated to the shop too;
// - shop: questions each answered by one shop document (it should be among the sources).
//
// For every search type (the project's `searchType`): (1) the top score of each question
// (`POST /api/knowledge/search`, topK 5, minScore 0) and, per floor, the share of claims that
// keep a hit and of everyday questions left with none, on each half of a fixed split (claims:
// sha256("scifact-split-v1:" + id), everyday: sha256("everyday-split-v1:" + id), even =
// tuning); (2) what the agent does with the shipped default floor: `POST
// /api/v1/chat/completions` with the project as model, counting answers with `sources`;
// (3) nDCG@10 of the claims through the search route (topK 100), scored with the dataset's
// score.mjs. Prints markdown; writes nothing. BENCH_RELEVANCE_QUERIES=N cuts each question set
// to its first N (a quick run).
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '@agent-platform/server';
import pino from 'pino';
import { evaluate } from './data/beir-scifact-5k/score.mjs';
import { halfOf, ingest, loadData } from './retrieval.mjs';
import { startBenchUpstream } from './upstream.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const CUT = process.env.BENCH_RELEVANCE_QUERIES ? Number(process.env.BENCH_RELEVANCE_QUERIES) : undefined;
const FLOORS = [0.1, 0.15, 0.2, 0.22, 0.24, 0.25, 0.26, 0.27, 0.28, 0.29, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6];
const TYPES = ['hybrid', 'mrr', 'semantic'];

/** The defect's case: a project whose documents have nothing to do with most questions. */
const SHOP_DOCS = [
  {
    fileName: 'refunds.md',
    content:
      '# Refunds\n\nACME refunds purchases within 30 days of delivery. Send the item back in its original packaging with the receipt; the money is returned to the card used to pay within five working days.',
  },
  {
    fileName: 'shipping.md',
    content: '# Shipping\n\nOrders leave our warehouse within two working days. Standard delivery takes three to five days; express delivery arrives the next day for a fee of 9 euros.',
  },
  { fileName: 'warranty.md', content: '# Warranty\n\nEvery ACME appliance has a two-year warranty covering manufacturing defects. Damage from misuse, drops or water is not covered.' },
];
const SHOP_RELATED = [
  { q: 'How long do I have to return an item for a refund?', doc: 'refunds.md' },
  { q: 'When will my order be delivered?', doc: 'shipping.md' },
  { q: 'Is my broken appliance covered by the warranty?', doc: 'warranty.md' },
  { q: 'Can I get my money back?', doc: 'refunds.md' },
  { q: 'How much does express shipping cost?', doc: 'shipping.md' },
  { q: 'How long does standard delivery take?', doc: 'shipping.md' },
  { q: 'Do I need the receipt to send something back?', doc: 'refunds.md' },
  { q: 'Is water damage covered?', doc: 'warranty.md' },
  { q: 'How many years of warranty do I get?', doc: 'warranty.md' },
  { q: 'When do I get the refund on my card?', doc: 'refunds.md' },
];

const log = (...a) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const pct = (x) => `${(x * 100).toFixed(1)}%`;
const f3 = (x) => x.toFixed(3);
const everydayHalf = (id) => (createHash('sha256').update(`everyday-split-v1:${id}`).digest()[0] % 2 === 0 ? 'tuning' : 'reporting');

async function loadEveryday() {
  const lines = (await readFile(join(root, 'bench/data/everyday-questions/questions.tsv'), 'utf8'))
    .split('\n')
    .slice(1)
    .filter((l) => l.trim());
  return lines.map((l) => {
    const [id, kind, text] = l.split('\t');
    return { _id: id, kind, text };
  });
}

/** A client of one running server, as the bench user. */
function client(url, key) {
  const call = async (method, path, body) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json;
  };
  return {
    search: (projectId, query, topK, minScore) => call('POST', '/api/knowledge/search', { projectId, query, topK, ...(minScore === undefined ? {} : { minScore }) }).then((r) => r.documents),
    ask: (projectId, content) => call('POST', '/api/v1/chat/completions', { model: projectId, messages: [{ role: 'user', content }] }),
    settings: (projectId, settings) => call('PUT', '/api/knowledge/settings', { projectId, settings }),
    call,
  };
}

async function serve(dataDir, upstream) {
  const logger = pino({ level: 'silent' });
  return startServer({ port: 0, dataDir, logger, env: { ...process.env, OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' } });
}

const topScore = (hits) => hits[0]?.score ?? 0;
const share = (xs, keep) => xs.filter(keep).length / (xs.length || 1);

async function main() {
  const data = await loadData();
  const qrels = new Map();
  for (const row of data.rows) {
    const [qid, docId, score] = row.split('\t');
    if (Number(score) <= 0) continue;
    if (!qrels.has(qid)) qrels.set(qid, new Map());
    qrels.get(qid).set(docId, Number(score));
  }
  const claims = data.queries.filter((q) => qrels.has(q._id)).slice(0, CUT);
  const everyday = (await loadEveryday()).slice(0, CUT);
  log(`${claims.length} claims, ${everyday.length} everyday questions, ${SHOP_RELATED.length} shop questions`);

  // The SciFact folder (ingested once, then reused), served by the real server.
  const ctx = await ingest(data.corpus, 512);
  const { key: scifactKey } = await ctx.platform.createKey(ctx.caller, { name: 'bench-relevance' });
  const scifactProject = ctx.projectId;
  const folder = ctx.dir;
  await ctx.platform.close();

  const upstream = await startBenchUpstream({ words: 3 });
  const scifactServer = await serve(folder, upstream);
  const shopDir = await mkdtemp(join(tmpdir(), 'ap-relevance-'));
  const shopServer = await serve(shopDir, upstream);
  try {
    const sci = client(scifactServer.url, scifactKey);
    const shop = client(shopServer.url, shopServer.firstKey);
    const shopProject = (await shop.call('POST', '/api/projects/create', { name: 'shop', model: 'gpt-bench', provider: 'openai' })).project.id;
    for (const d of SHOP_DOCS) await shop.call('POST', '/api/knowledge/documents', { projectId: shopProject, fileType: 'md', sourceType: 'upload', ...d });
    while ((await shop.call('GET', `/api/knowledge/documents?projectId=${shopProject}&status=completed`)).total < SHOP_DOCS.length) await new Promise((r) => setTimeout(r, 100));
    await sci.search(scifactProject, 'warm up', 5);

    const results = {};
    for (const type of TYPES) {
      // The project's search type (hybrid is the default: no setting).
      const settings = type === 'hybrid' ? {} : { searchType: type };
      await sci.settings(scifactProject, settings);
      await shop.settings(shopProject, settings);
      const started = performance.now();
      const r = { claims: [], everyday: [], shopUnrelated: [], shopRelated: [], agent: {}, ndcg: {} };
      for (const q of claims) r.claims.push({ half: halfOf(q._id), score: topScore(await sci.search(scifactProject, q.text, 5, 0)) });
      for (const q of everyday) r.everyday.push({ half: everydayHalf(q._id), score: topScore(await sci.search(scifactProject, q.text, 5, 0)) });
      for (const q of [...everyday, ...claims]) r.shopUnrelated.push(topScore(await shop.search(shopProject, q.text, 5, 0)));
      for (const q of SHOP_RELATED) r.shopRelated.push(Math.max(0, ...(await shop.search(shopProject, q.q, 5, 0)).filter((h) => h.metadata.fileName === q.doc).map((h) => h.score)));

      // The agent with the shipped default floor: does an answer carry sources?
      const withSources = async (c, project, text) => (await c.ask(project, text)).sources.length > 0;
      const agent = { claims: { tuning: [], reporting: [] }, everyday: { tuning: [], reporting: [] }, shopUnrelated: [], shopRelated: [] };
      for (const q of claims) agent.claims[halfOf(q._id)].push(await withSources(sci, scifactProject, q.text));
      for (const q of everyday) agent.everyday[everydayHalf(q._id)].push(await withSources(sci, scifactProject, q.text));
      for (const q of everyday) agent.shopUnrelated.push(await withSources(shop, shopProject, q.text));
      for (const q of SHOP_RELATED) {
        const answer = await shop.ask(shopProject, q.q);
        agent.shopRelated.push(answer.sources.some((s) => s.fileName === q.doc));
      }
      r.agent = agent;

      // nDCG@10 of the claims through the search route, topK 100.
      const run = new Map();
      for (const q of claims) {
        const ids = [];
        for (const h of await sci.search(scifactProject, q.text, 100)) {
          const id = String(h.metadata.fileName).replace(/\.txt$/, '');
          if (!ids.includes(id)) ids.push(id);
        }
        run.set(q._id, ids);
      }
      for (const half of ['tuning', 'reporting', 'all']) {
        const judged = new Map([...qrels].filter(([qid]) => run.has(qid) && (half === 'all' || halfOf(qid) === half)));
        r.ndcg[half] = evaluate(judged, run).mean['ndcg@10'];
      }
      results[type] = r;
      log(`${type}: nDCG@10 ${f3(r.ndcg.all)} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    await sci.settings(scifactProject, {});
    print(results, { claims: claims.length, everyday: everyday.length });
  } finally {
    await scifactServer.close();
    await shopServer.close();
    await upstream.close();
    await rm(shopDir, { recursive: true, force: true });
  }
}

function print(results, counts) {
  console.log(`\nRecorded ${new Date().toISOString().slice(0, 10)}; ${counts.claims} claims, ${counts.everyday} everyday questions, ${SHOP_RELATED.length} shop questions.\n`);
  console.log('### What the agent does with the default floor (sources attached, through /api/v1/chat/completions)\n');
  console.log(
    '| search type | claims with sources (tuning / reporting / all) | everyday questions without sources on SciFact (tuning / reporting / all) | everyday without sources on the shop | shop questions citing their document | nDCG@10 through HTTP (tuning / reporting / all) |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const [type, r] of Object.entries(results)) {
    const a = r.agent;
    const all = (x) => [...x.tuning, ...x.reporting];
    console.log(
      `| ${type} | ${pct(share(a.claims.tuning, Boolean))} / ${pct(share(a.claims.reporting, Boolean))} / **${pct(share(all(a.claims), Boolean))}** ` +
        `| ${pct(share(a.everyday.tuning, (x) => !x))} / ${pct(share(a.everyday.reporting, (x) => !x))} / **${pct(share(all(a.everyday), (x) => !x))}** ` +
        `| ${pct(share(a.shopUnrelated, (x) => !x))} | ${a.shopRelated.filter(Boolean).length} of ${a.shopRelated.length} ` +
        `| ${f3(r.ndcg.tuning)} / ${f3(r.ndcg.reporting)} / **${f3(r.ndcg.all)}** |`,
    );
  }
  for (const [type, r] of Object.entries(results)) {
    console.log(`\n### ${type}: by floor (top score of each question, search route, topK 5)\n`);
    const q = (xs, p) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
    const claimScores = r.claims.map((c) => c.score);
    const dayScores = r.everyday.map((c) => c.score);
    console.log(
      `claims' top score p1 / p5 / median: ${f3(q(claimScores, 0.01))} / ${f3(q(claimScores, 0.05))} / ${f3(q(claimScores, 0.5))}; everyday questions' top score median / p95 / max: ${f3(q(dayScores, 0.5))} / ${f3(q(dayScores, 0.95))} / ${f3(Math.max(...dayScores))}; on the shop, unrelated median / p95 / max: ${f3(q(r.shopUnrelated, 0.5))} / ${f3(q(r.shopUnrelated, 0.95))} / ${f3(Math.max(...r.shopUnrelated))}; shop questions' document: ${r.shopRelated.map(f3).join(', ')}\n`,
    );
    console.log(
      '| floor | claims keeping a hit (tuning / reporting / all) | everyday with no hit on SciFact (tuning / reporting / all) | unrelated with no hit on the shop | shop questions keeping their document |',
    );
    console.log('|---|---|---|---|---|');
    let best;
    for (const floor of FLOORS) {
      const keep = (half) =>
        share(
          r.claims.filter((c) => half === 'all' || c.half === half),
          (c) => c.score >= floor,
        );
      const none = (half) =>
        share(
          r.everyday.filter((c) => half === 'all' || c.half === half),
          (c) => c.score < floor,
        );
      const m = Math.min(keep('tuning'), none('tuning'));
      if (!best || m > best.m) best = { floor, m };
      console.log(
        `| ${floor} | ${pct(keep('tuning'))} / ${pct(keep('reporting'))} / ${pct(keep('all'))} | ${pct(none('tuning'))} / ${pct(none('reporting'))} / ${pct(none('all'))} ` +
          `| ${pct(share(r.shopUnrelated, (s) => s < floor))} | ${r.shopRelated.filter((s) => s >= floor).length} of ${r.shopRelated.length} |`,
      );
    }
    console.log(`\nBest floor on the tuning halves (most claims kept and everyday questions dropped, the smaller share the larger): ${best.floor}`);
  }
}

await main();
