// pnpm bench:relevance-floor — the data behind the agent's default
// relevance floor (AGENT_MIN_SCORE in @agent-platform/core, docs/AGENT.md "Relevance floor").
//
// The agent searches a project's knowledge with the project's defaults (hybrid α=0.2, topK 5
// unless changed) and gives the model only hits whose score reaches a floor. The floor must not
// drop relevant chunks (recall) and should drop the hits of questions the knowledge does not
// cover. Measured on BEIR SciFact (the 5,000 abstracts pnpm bench:retrieval ingests into
// .bench-data/retrieval/c512-o64; ingested here when missing) with the built-in embedder:
//
// 1. Relevant: the 300 claims on the SciFact project, topK 5 (the agent's default) and 100.
//    The scores of hits whose document the qrels judge relevant, and recall@5 at each floor.
// 2. Unrelated: questions no abstract answers (weather, sport, cooking, travel, ...), on the
//    SciFact project: the scores of their hits at topK 5.
// 3. A small unrelated project (the defect's case): 3 shop-policy documents; the SciFact claims
//    and the off-topic questions are all unrelated there; one question per document is related.
//
// Every search type is measured (the floor applies to `score`, whatever the type); the table
// prints, per floor, recall@5 of the claims and the share of unrelated questions left with no
// hit. Prints; writes nothing.
import { AgentPlatform } from '@agent-platform/core';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingest, loadData } from './retrieval.mjs';

const FLOORS = [0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];
const TYPES = [{ name: 'hybrid α=0.2 (default)', request: {} }, { name: 'semantic', request: { searchType: 'semantic' } }, { name: 'mrr', request: { searchType: 'mrr' } }];

/** Questions no SciFact abstract and no shop policy answers. */
const OFF_TOPIC = [
  'What is the weather like in Paris today?', 'Will it rain tomorrow in London?', 'Who won the football world cup in 2018?',
  'How do I bake a chocolate cake?', 'What is a good recipe for lasagna?', 'Recommend a hotel in Rome near the Colosseum.',
  'How many goals did Messi score last season?', 'What time does the train to Berlin leave?', 'Tell me a joke about cats.',
  'How do I change a flat tyre on my bicycle?', 'What is the capital of Australia?', 'Who wrote the novel Pride and Prejudice?',
  'How do I reverse a linked list in Python?', 'What is the best way to learn the guitar?', 'Which movies are playing tonight?',
  'How tall is the Eiffel Tower?', 'What should I wear to a summer wedding?', 'How do I set up a home wifi router?',
  'What are the rules of chess castling?', 'Where can I buy cheap concert tickets?', 'How do I paint a bedroom wall?',
  'What is the exchange rate of the euro to the dollar?', 'Plan a three day trip to Tokyo.', 'How long should I boil an egg?',
  'What is the plot of the film Inception?', 'How do I write a cover letter for a job?', 'Is it going to snow this weekend?',
  'Who is the lead singer of Coldplay?', 'How do I grow tomatoes on a balcony?', 'What is the score of the basketball game?',
];

/** The defect's case: a project whose documents have nothing to do with most questions. */
const SHOP_DOCS = [
  { fileName: 'refunds.md', content: '# Refunds\n\nACME refunds purchases within 30 days of delivery. Send the item back in its original packaging with the receipt; the money is returned to the card used to pay within five working days.' },
  { fileName: 'shipping.md', content: '# Shipping\n\nOrders leave our warehouse within two working days. Standard delivery takes three to five days; express delivery arrives the next day for a fee of 9 euros.' },
  { fileName: 'warranty.md', content: '# Warranty\n\nEvery ACME appliance has a two-year warranty covering manufacturing defects. Damage from misuse, drops or water is not covered.' },
];
const SHOP_RELATED = [
  { q: 'How long do I have to return an item for a refund?', doc: 'refunds.md' },
  { q: 'When will my order be delivered?', doc: 'shipping.md' },
  { q: 'Is my broken appliance covered by the warranty?', doc: 'warranty.md' },
  { q: 'Can I get my money back?', doc: 'refunds.md' },
  { q: 'How much does express shipping cost?', doc: 'shipping.md' },
];

const quantile = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] : NaN);
const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');
const docOf = (hit) => String(hit.metadata.fileName).replace(/\.txt$/, '');

async function searchAll(platform, caller, projectId, queries, request) {
  const out = [];
  for (const text of queries) out.push((await platform.searchKnowledge(caller, { projectId, query: text, ...request })).documents);
  return out;
}

const data = await loadData();
const qrels = new Map();
for (const row of data.rows) {
  const [qid, docId] = row.split('\t');
  if (!qrels.has(qid)) qrels.set(qid, new Set());
  qrels.get(qid).add(docId);
}
const claims = data.queries.filter((q) => qrels.has(q._id));
const ctx = await ingest(data.corpus, 512);

// The small shop project, in a platform of its own (temporary folder).
const shopDir = await mkdtemp(join(tmpdir(), 'ap-floor-'));
const shopStorage = await sqliteStorage({ path: join(shopDir, 'db.sqlite') });
const shop = new AgentPlatform({ storage: shopStorage, knowledge: { vectors: await builtinVectorStore({ dir: join(shopDir, 'vectors') }), embedder: builtinEmbedder() } });
await shop.start();
const shopUser = { userId: (await shop.createUserWithKey({ name: 'shop' })).userId };
const shopProject = (await shop.createProject(shopUser, { name: 'shop', model: 'm', provider: 'openai' })).project.id;
for (const d of SHOP_DOCS) await shop.createDocument(shopUser, { projectId: shopProject, fileType: 'md', sourceType: 'upload', ...d });

const rows = [];
for (const type of TYPES) {
  const relevant5 = await searchAll(ctx.platform, ctx.caller, ctx.projectId, claims.map((q) => q.text), { ...type.request, topK: 5 });
  const relevant100 = await searchAll(ctx.platform, ctx.caller, ctx.projectId, claims.map((q) => q.text), { ...type.request, topK: 100 });
  const offTopic = await searchAll(ctx.platform, ctx.caller, ctx.projectId, OFF_TOPIC, { ...type.request, topK: 5 });
  const shopUnrelated = await searchAll(shop, shopUser, shopProject, [...OFF_TOPIC, ...claims.map((q) => q.text)], { ...type.request, topK: 5 });
  const shopRelated = await searchAll(shop, shopUser, shopProject, SHOP_RELATED.map((r) => r.q), { ...type.request, topK: 5 });

  // Scores of relevant documents' best chunk among the hits.
  const relScores = (results) =>
    claims.flatMap((q, i) => {
      const best = new Map();
      for (const h of results[i]) if (qrels.get(q._id).has(docOf(h))) best.set(docOf(h), Math.max(best.get(docOf(h)) ?? 0, h.score));
      return [...best.values()];
    });
  const rel5 = relScores(relevant5);
  const rel100 = relScores(relevant100);
  const judged = claims.reduce((n, q) => n + qrels.get(q._id).size, 0);
  const shopRelatedScores = SHOP_RELATED.map((r, i) => Math.max(0, ...shopRelated[i].filter((h) => h.metadata.fileName === r.doc).map((h) => h.score)));
  console.log(`\n## ${type.name}`);
  console.log(`relevant chunks' scores (SciFact claims, best chunk of each relevant document): topK 5: n=${rel5.length}, min ${f3(Math.min(...rel5))}, p1 ${f3(quantile(rel5, 0.01))}, p5 ${f3(quantile(rel5, 0.05))}, median ${f3(quantile(rel5, 0.5))}; topK 100: n=${rel100.length}, min ${f3(Math.min(...rel100))}, p5 ${f3(quantile(rel100, 0.05))}, median ${f3(quantile(rel100, 0.5))}`);
  const top = (results) => results.map((r) => r[0]?.score ?? 0);
  console.log(`off-topic questions on SciFact, top score: min ${f3(Math.min(...top(offTopic)))}, median ${f3(quantile(top(offTopic), 0.5))}, max ${f3(Math.max(...top(offTopic)))}`);
  console.log(`unrelated questions on the shop project, top score: min ${f3(Math.min(...top(shopUnrelated)))}, median ${f3(quantile(top(shopUnrelated), 0.5))}, p95 ${f3(quantile(top(shopUnrelated), 0.95))}, max ${f3(Math.max(...top(shopUnrelated)))}`);
  console.log(`related questions on the shop project, score of the right document: ${shopRelatedScores.map(f3).join(', ')}`);
  console.log('| floor | SciFact recall@5 | relevant hits kept (topK 5) | off-topic on SciFact: no hit | unrelated on shop: no hit | shop related kept |');
  console.log('|---|---|---|---|---|---|');
  for (const floor of FLOORS) {
    const kept = claims.reduce((n, q, i) => n + new Set(relevant5[i].filter((h) => h.score >= floor && qrels.get(q._id).has(docOf(h))).map(docOf)).size, 0);
    const recall = kept / judged;
    const none = (results) => results.filter((r) => !r.some((h) => h.score >= floor)).length / results.length;
    const row = { type: type.name, floor, recall, keptShare: kept / rel5.length, offNone: none(offTopic), shopNone: none(shopUnrelated), shopRelated: shopRelatedScores.filter((s) => s >= floor).length };
    rows.push(row);
    console.log(`| ${floor} | ${f3(recall)} | ${kept} of ${rel5.length} | ${(row.offNone * 100).toFixed(0)}% of ${offTopic.length} | ${(row.shopNone * 100).toFixed(0)}% of ${shopUnrelated.length} | ${row.shopRelated} of ${SHOP_RELATED.length} |`);
  }
}
await shop.close();
await rm(shopDir, { recursive: true, force: true });
await ctx.platform.close();
