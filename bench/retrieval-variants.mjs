// pnpm bench:retrieval-variants — the measurements behind the knowledge search defaults: keyword
// analysis variants (stemming, stop words, title weighting, BM25 k1/b) and fusion methods
// (relative score / min-max, the former "similarity + BM25 / best", z-score, reciprocal rank) at
// several weights and candidate depths, on BEIR SciFact, scored on both halves of the fixed split.
//
// Reads the data folder pnpm bench:retrieval ingested (.bench-data/retrieval/c512-o64: run that
// first): the chunk texts from SQLite and their vectors from the built-in store; embeds the 300
// claims with the built-in embedder. Then ranks every chunk in plain JavaScript: BM25 over the
// chunk texts (the variant's analyzer, k1/b), cosine over all vectors, fused over the top
// `depth` candidates of each side, as the service does. Chunk ids map to corpus ids, first
// occurrence kept; nDCG@10 from the dataset's score.mjs. Last, calibrated fusions (the service's
// scores and variants of them) with the relevance floor each allows, against the everyday
// questions of bench/data/everyday-questions. Prints tables (nothing is written).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { keywordTerms, keywordWords } from '@agent-platform/core/internal';
import { evaluate, loadQrels } from './data/beir-scifact-5k/score.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dataDir = join(root, 'bench/data/beir-scifact-5k');
const folder = join(root, '.bench-data/retrieval/c512-o64');
if (!existsSync(join(folder, 'bench-retrieval.json'))) throw new Error(`${folder} not found: run pnpm bench:retrieval first`);
// The stemmer the core analyzer uses, for the variants that leave out one of its steps; a word
// is a stop word when the analyzer keeps nothing of it.
const stem = createRequire(join(root, 'packages/core/package.json'))('wink-porter2-stemmer');
const isStopWord = (word) => keywordTerms(word).length === 0;

const readJsonl = (path) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
const queries = readJsonl(join(dataDir, 'queries.jsonl'));
const titles = new Map(readJsonl(join(dataDir, 'corpus.jsonl')).map((d) => [d._id, d.title]));
const qrels = loadQrels(join(dataDir, 'qrels.tsv'));
const halfOf = (id) => (createHash('sha256').update(`scifact-split-v1:${id}`).digest()[0] % 2 === 0 ? 'tuning' : 'reporting');
const qrelsBy = { tuning: new Map(), reporting: new Map() };
for (const [q, judged] of qrels) qrelsBy[halfOf(q)].set(q, judged);

// ---- the ingested chunks and their vectors ----
const marker = JSON.parse(readFileSync(join(folder, 'bench-retrieval.json'), 'utf8'));
const storage = await sqliteStorage({ path: join(folder, 'agent-platform.db') });
const store = await builtinVectorStore({ dir: join(folder, 'vectors') });
const embedder = builtinEmbedder();
const namespace = `${marker.projectId}:${embedder.id}`;
const probe = new Float32Array(embedder.dimensions);
probe[0] = 1;
const all = await store.query(namespace, { vector: probe, topK: 1_000_000, includeVectors: true });
const rows = new Map(
  (
    await storage.chunks.getMany(
      marker.projectId,
      all.map((h) => h.id),
    )
  ).map((c) => [c.id, c]),
);
const chunks = all.map((h) => {
  const c = rows.get(h.id);
  return { doc: String(c.metadata.fileName).replace(/\.txt$/, ''), index: c.index, text: c.text, vector: h.vector };
});
const N = chunks.length;
const queryVectors = await embedder.embed(queries.map((q) => q.text));
await embedder.close();
await store.close();
await storage.close();
console.log(`${N} chunks of ${marker.docs} documents (chunk size ${marker.chunkSize}), ${queries.length} queries`);

// ---- keyword variants ----
const analyzers = {
  'words only (no stemming, no stop words)': (t) => keywordWords(t),
  'stop words only': (t) => keywordWords(t).filter((w) => !isStopWord(w)),
  'Porter2 stems only': (t) => keywordWords(t).map((w) => stem(w)),
  'stop words + Porter2 (the service: keywordTerms)': (t) => keywordTerms(t),
};

function bm25(analyze, { k1 = 1.2, b = 0.75, titleWeight = 1 } = {}) {
  const postings = new Map();
  const length = new Float64Array(N);
  chunks.forEach((c, i) => {
    let terms = analyze(c.text);
    if (titleWeight > 1 && c.index === 0) {
      const title = analyze(titles.get(c.doc) ?? '');
      for (let w = 1; w < titleWeight; w++) terms = terms.concat(title);
    }
    const tf = new Map();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    length[i] = terms.length;
    for (const [t, n] of tf) {
      if (!postings.has(t)) postings.set(t, []);
      postings.get(t).push(i, n);
    }
  });
  const avg = length.reduce((a, x) => a + x, 0) / N;
  return (text) => {
    const scores = new Float64Array(N);
    for (const t of new Set(analyze(text))) {
      const p = postings.get(t);
      if (!p) continue;
      const df = p.length / 2;
      const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
      for (let j = 0; j < p.length; j += 2) {
        const i = p[j];
        const tf = p[j + 1];
        scores[i] += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length[i]) / avg));
      }
    }
    return scores;
  };
}

const best = (scores, k) => {
  const idx = [];
  for (let i = 0; i < N; i++) if (scores[i] > 0) idx.push(i);
  return idx.sort((a, b) => scores[b] - scores[a]).slice(0, k);
};
function ndcg(rank) {
  const run = new Map();
  queries.forEach((q, qi) => {
    const seen = new Set();
    const ids = [];
    for (const i of rank(q, qi)) {
      const d = chunks[i].doc;
      if (!seen.has(d)) {
        seen.add(d);
        ids.push(d);
      }
    }
    run.set(q._id, ids);
  });
  return { tuning: evaluate(qrelsBy.tuning, run).mean['ndcg@10'], reporting: evaluate(qrelsBy.reporting, run).mean['ndcg@10'] };
}
const cell = (r) => `${r.tuning.toFixed(3)} / ${r.reporting.toFixed(3)}`;

console.log('\n### Keyword side alone (BM25 over chunks), nDCG@10 tuning / reporting\n');
console.log('| analyzer | k1, b | title weight | nDCG@10 |\n|---|---|---|---|');
const variants = [
  ...Object.keys(analyzers).map((name) => [name, {}]),
  ['stop words + Porter2 (the service: keywordTerms)', { k1: 0.9, b: 0.4 }],
  ['stop words + Porter2 (the service: keywordTerms)', { k1: 1.5, b: 0.75 }],
  ['stop words + Porter2 (the service: keywordTerms)', { titleWeight: 2 }],
];
for (const [name, options] of variants) {
  const index = bm25(analyzers[name], options);
  console.log(`| ${name} | ${options.k1 ?? 1.2}, ${options.b ?? 0.75} | ${options.titleWeight ?? 1} | ${cell(ndcg((q) => best(index(q.text), 100)))} |`);
}

// ---- fusion methods, on the service's keyword side ----
const keywordIndex = bm25(keywordTerms);
const keywordScores = queries.map((q) => keywordIndex(q.text));
const semanticScores = queryVectors.map((qv) => {
  const s = new Float64Array(N);
  chunks.forEach((c, i) => {
    let d = 0;
    for (let k = 0; k < qv.length; k++) d += qv[k] * c.vector[k];
    s[i] = d;
  });
  return s;
});
const keywordTop = keywordScores.map((s) => best(s, 400));
const semanticTop = semanticScores.map((s) => [...Array(N).keys()].sort((a, b) => s[b] - s[a]).slice(0, 400));

const scalers = {
  minmax: (values) => {
    const max = Math.max(...values);
    const min = Math.min(...values);
    return (x) => (max > min ? (x - min) / (max - min) : 1);
  },
  'divide by best': (values) => {
    const max = Math.max(...values);
    return (x) => (max > 0 ? x / max : 0);
  },
  identity: () => (x) => Math.min(1, Math.max(0, x)),
  'z-score (±3σ → 0..1)': (values) => {
    const mean = values.reduce((a, x) => a + x, 0) / values.length;
    const sd = Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / values.length) || 1;
    return (x) => Math.min(1, Math.max(0, ((x - mean) / sd + 3) / 6));
  },
};
const methods = {
  'relative score (min-max both; the service before calibration)': { keyword: 'minmax', semantic: 'minmax' },
  'former: similarity + BM25 / best': { keyword: 'divide by best', semantic: 'identity' },
  'z-score both': { keyword: 'z-score (±3σ → 0..1)', semantic: 'z-score (±3σ → 0..1)' },
  'reciprocal rank (k 60)': 'rrf',
};
function fused(qi, method, depth, alpha) {
  const k = keywordTop[qi].slice(0, depth);
  const s = semanticTop[qi].slice(0, depth);
  const ids = [...new Set([...k, ...s])];
  let score;
  if (method === 'rrf') {
    const kr = new Map(k.map((i, r) => [i, r + 1]));
    const sr = new Map(s.map((i, r) => [i, r + 1]));
    score = (i) => (sr.has(i) ? alpha / (60 + sr.get(i)) : 0) + (kr.has(i) ? (1 - alpha) / (60 + kr.get(i)) : 0);
  } else {
    const ks = k.length ? scalers[method.keyword](k.map((i) => keywordScores[qi][i])) : () => 0;
    const ss = scalers[method.semantic](s.map((i) => semanticScores[qi][i]));
    const inK = new Set(k);
    const inS = new Set(s);
    score = (i) => alpha * (inS.has(i) ? ss(semanticScores[qi][i]) : 0) + (1 - alpha) * (inK.has(i) ? ks(keywordScores[qi][i]) : 0);
  }
  const values = new Map(ids.map((i) => [i, score(i)]));
  return ids.sort((a, b) => values.get(b) - values.get(a));
}

const ALPHAS = [0, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7];
console.log('\n### Fusion, nDCG@10 tuning / reporting by alpha (0 = keyword only)\n');
console.log(`| method | candidates per side | ${ALPHAS.map((a) => `α=${a}`).join(' | ')} |\n|---|---|${ALPHAS.map(() => '---').join('|')}|`);
for (const [name, method] of Object.entries(methods)) {
  for (const depth of name.startsWith('relative') ? [20, 100, 400] : [100]) {
    const cells = ALPHAS.map((alpha) => cell(ndcg((_q, qi) => fused(qi, method, depth, alpha))));
    console.log(`| ${name} | ${depth} | ${cells.join(' | ')} |`);
  }
}
console.log(`\nsemantic alone (cosine over all chunks): ${cell(ndcg((_q, qi) => semanticTop[qi].slice(0, 100)))}`);

// ---- calibrated fusion: ranking and the relevance floor together ----
// Scores on a fixed scale, as the service computes them: BM25 with FTS5's idf over the whole
// index, against the query's ceiling Σ idf · (k1 + 1) (of every query term, or of the terms some
// chunk holds); cosine similarities on the built-in model's scale (unrelated 0.2, related 0.7).
// Besides nDCG@10, the everyday questions of bench/data/everyday-questions (no abstract answers
// them) are scored the same way: for each method, the floor that best separates the claims' top
// scores from the everyday questions' on the tuning halves, and the shares it keeps / drops.
const everyday = readFileSync(join(root, 'bench/data/everyday-questions/questions.tsv'), 'utf8')
  .split('\n')
  .slice(1)
  .filter((l) => l.trim())
  .map((l) => {
    const [id, , text] = l.split('\t');
    return { id, text };
  });
const everydayHalf = (id) => (createHash('sha256').update(`everyday-split-v1:${id}`).digest()[0] % 2 === 0 ? 'tuning' : 'reporting');
const embedder2 = builtinEmbedder();
const everydayVectors = await embedder2.embed(everyday.map((q) => q.text));
await embedder2.close();
const fts = (() => {
  const postings = new Map();
  const length = new Float64Array(N);
  chunks.forEach((c, i) => {
    const tf = new Map();
    const terms = keywordTerms(c.text);
    length[i] = terms.length;
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      if (!postings.has(t)) postings.set(t, []);
      postings.get(t).push(i, n);
    }
  });
  const avg = length.reduce((a, x) => a + x, 0) / N;
  const idfOf = (n) => Math.max(Math.log((N - n + 0.5) / (n + 0.5)), 1e-6);
  return (text) => {
    const scores = new Float64Array(N);
    let all = 0;
    let held = 0;
    for (const t of new Set(keywordTerms(text))) {
      const p = postings.get(t) ?? [];
      const idf = idfOf(p.length / 2);
      all += idf * 2.2;
      if (p.length) held += idf * 2.2;
      for (let j = 0; j < p.length; j += 2) scores[p[j]] += (idf * p[j + 1] * 2.2) / (p[j + 1] + 1.2 * (0.25 + (0.75 * length[p[j]]) / avg));
    }
    return { scores, all, held };
  };
})();
const cosines = (qv) => {
  const out = new Float64Array(N);
  chunks.forEach((c, i) => {
    let d = 0;
    for (let k = 0; k < qv.length; k++) d += qv[k] * c.vector[k];
    out[i] = d;
  });
  return out;
};
const calibrated = [...queries.map((q, qi) => ({ text: q.text, vector: queryVectors[qi] })), ...everyday.map((q, i) => ({ text: q.text, vector: everydayVectors[i] }))].map(({ text, vector }) => {
  const k = fts(text);
  const cos = cosines(vector);
  // The service's candidates: the best 100 of each side.
  const ids = [...new Set([...best(k.scores, 100), ...[...Array(N).keys()].sort((a, b) => cos[b] - cos[a]).slice(0, 100)])];
  return { k, cos, ids };
});
const clamp01 = (x) => Math.min(1, Math.max(0, x));
const scale = { unrelated: 0.2, related: 0.7 };
const similarity = (c) => clamp01((c - scale.unrelated) / (1 - scale.unrelated));
const related = (c) => clamp01((c - scale.unrelated) / (scale.related - scale.unrelated));
const calibratedMethods = {
  'weighted sum, ceiling of every term': (K, c, alpha) => alpha * similarity(c) + (1 - alpha) * K.all,
  'weighted sum, ceiling of held terms': (K, c, alpha) => alpha * similarity(c) + (1 - alpha) * K.held,
  'min(keyword, relatedness), ceiling of every term': (K, c, alpha) => alpha * similarity(c) + (1 - alpha) * Math.min(K.all, related(c)),
  'min(keyword, relatedness), ceiling of held terms (the service)': (K, c, alpha) => alpha * similarity(c) + (1 - alpha) * Math.min(K.held, related(c)),
};
const judgedClaims = queries.map((q, qi) => ({ q, qi })).filter(({ q }) => qrels.has(q._id));
const share = (xs, keep) => xs.filter(keep).length / (xs.length || 1);
console.log('\n### Calibrated fusion: nDCG@10 and the best floor (chosen on the tuning halves), by alpha\n');
console.log('Cells: nDCG@10 tuning / reporting; floor; claims keeping a hit / everyday questions with none, over both halves.\n');
const CAL_ALPHAS = [0.1, 0.15, 0.2, 0.3];
console.log(`| method | ${CAL_ALPHAS.map((a) => `α=${a}`).join(' | ')} |\n|---|${CAL_ALPHAS.map(() => '---').join('|')}|`);
for (const [name, fuse] of Object.entries(calibratedMethods)) {
  const cells = CAL_ALPHAS.map((alpha) => {
    const scored = calibrated.map(({ k, cos, ids }) => {
      const K = (i) => ({ all: k.all > 0 ? k.scores[i] / k.all : 0, held: k.held > 0 ? k.scores[i] / k.held : 0 });
      return ids
        .map((i) => [i, fuse(K(i), cos[i], alpha)])
        .filter(([, v]) => v > 0)
        .sort((a, b) => b[1] - a[1]);
    });
    const n = ndcg((_q, qi) => scored[qi].map(([i]) => i));
    const top = (qi) => scored[qi][0]?.[1] ?? 0;
    const claimTop = judgedClaims.map(({ q, qi }) => ({ half: halfOf(q._id), score: top(qi) }));
    const dayTop = everyday.map((e, j) => ({ half: everydayHalf(e.id), score: top(queries.length + j) }));
    let chosen;
    for (const floor of [...new Set([...claimTop, ...dayTop].map((x) => x.score))].sort((a, b) => a - b)) {
      const m = Math.min(
        share(
          claimTop.filter((x) => x.half === 'tuning'),
          (x) => x.score >= floor,
        ),
        share(
          dayTop.filter((x) => x.half === 'tuning'),
          (x) => x.score < floor,
        ),
      );
      if (!chosen || m > chosen.m) chosen = { floor, m };
    }
    return `${cell(n)}; ${chosen.floor.toFixed(2)}; ${(share(claimTop, (x) => x.score >= chosen.floor) * 100).toFixed(1)}% / ${(share(dayTop, (x) => x.score < chosen.floor) * 100).toFixed(1)}%`;
  });
  console.log(`| ${name} | ${cells.join(' | ')} |`);
}
process.exit(0);
