// Worker thread of the openai embedder's token counter (see worker-client.ts for the protocol,
// token-counter.ts for its client): loads gpt-tokenizer's cl100k_base on the first request (the
// module and its BPE tables hold a thread for a few hundred ms), then answers { id, inputs }
// (each `{ text, max }`) with { id, outputs } (each `{ tokens }`, or `{ tokens, text }` when the
// text was cut to `max` tokens) or { id, error }. Plain JavaScript, so Node runs it from the
// sources (tests) and from dist alike; imported on a main thread (the tests), it only exports.
// Counting never runs on the server's main thread: a MB of text takes the tokenizer a quarter
// of a second or more, and one long run of a character (below) far longer.
import { isMainThread, parentPort } from 'node:worker_threads';

// Text that looks like a special token (`<|endoftext|>`) is ordinary text here.
const PLAIN = { disallowedSpecial: new Set() };

/**
 * gpt-tokenizer's byte-pair merge (`BytePairEncodingCore.bytePairMerge`, 4.x) scans every pair
 * of a pre-token for the lowest rank at each merge: quadratic in the pre-token's length. One
 * pre-token can be the whole text (a run of letters or of `#`: 256 KB took 46 s), and search
 * queries and chat messages reach the embedder as they are. This does the same merges with a
 * heap: each step merges the pair of lowest rank, the leftmost of equal ranks, as the original,
 * so the tokens are the same; O(n log n). `core` is the encoding's BytePairEncodingCore (its
 * `getBpeRankFromBytes`), `piece` the pre-token's UTF-8 bytes.
 */
export function heapMerge(core, piece) {
  const n = piece.length;
  // Parts are identified by their start; next[s] is where the part after s starts (n: the end).
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  // Bumped when the pair starting at s changes (or s stops being a part): older heap entries are stale.
  const version = new Uint32Array(n + 1);
  for (let i = 0; i <= n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const rankOf = (start) => {
    const mid = next[start];
    if (mid >= n) return undefined;
    return core.getBpeRankFromBytes(piece.subarray(start, next[mid]));
  };
  // A binary min-heap of (rank, start, version), ordered by rank then start.
  const ranks = [];
  const starts = [];
  const versions = [];
  const before = (i, j) => ranks[i] < ranks[j] || (ranks[i] === ranks[j] && starts[i] < starts[j]);
  const swap = (i, j) => {
    [ranks[i], ranks[j]] = [ranks[j], ranks[i]];
    [starts[i], starts[j]] = [starts[j], starts[i]];
    [versions[i], versions[j]] = [versions[j], versions[i]];
  };
  const push = (start) => {
    const rank = rankOf(start);
    if (rank === undefined) return;
    let i = ranks.length;
    ranks.push(rank);
    starts.push(start);
    versions.push(version[start]);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(i, parent)) break;
      swap(i, parent);
      i = parent;
    }
  };
  const pop = () => {
    const last = ranks.length - 1;
    swap(0, last);
    const top = { start: starts.pop(), version: versions.pop() };
    ranks.pop();
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= ranks.length) break;
      const child = left + 1 < ranks.length && before(left + 1, left) ? left + 1 : left;
      if (!before(child, i)) break;
      swap(i, child);
      i = child;
    }
    return top;
  };
  for (let i = 0; i < n - 1; i++) push(i);
  while (ranks.length > 0) {
    const { start, version: seen } = pop();
    if (seen !== version[start]) continue;
    // Merge the part at `start` with the next one.
    const mid = next[start];
    const end = next[mid];
    next[start] = end;
    if (end <= n) prev[end] = start;
    version[mid]++;
    version[start]++;
    push(start);
    const left = prev[start];
    if (left >= 0) {
      version[left]++;
      push(left);
    }
  }
  const output = [];
  for (let s = 0; s < n; s = next[s]) output.push(core.getBpeRankFromBytesOrThrow(piece.subarray(s, next[s])));
  return output;
}

/** Pre-tokens the heap merge must split exactly as the original before it replaces it. */
const SELF_CHECK = [
  'hello',
  '#'.repeat(700),
  'a'.repeat(300),
  '=-'.repeat(200),
  ' '.repeat(257),
  'Supercalifragilisticexpialidocious',
  '日本語のテキストです',
  '😀👍🏽🏳️‍🌈'.repeat(20),
  '\u00e9\u0301'.repeat(50),
  '.,;:!?'.repeat(60),
];

/** Pre-tokens of more bytes than this are merged by {@link heapMerge} and kept out of the merge cache. */
const LONG_PIECE = 64;

/**
 * Makes `core` merge pre-tokens longer than LONG_PIECE bytes with {@link heapMerge}, after
 * checking on a few pre-tokens that both give the same tokens; otherwise (another version of
 * gpt-tokenizer, another structure) leaves the original. Long pre-tokens are also kept out of
 * its merge cache (100,000 entries, keyed by the pre-token: distinct long ones would hold
 * megabytes each). Answers whether it replaced the merge.
 */
export function installHeapMerge(core) {
  const original = core?.bytePairMerge;
  const cache = core?.addToMergeCache;
  if (typeof original !== 'function' || typeof cache !== 'function' || typeof core.getBpeRankFromBytes !== 'function') return false;
  const encoder = new TextEncoder();
  try {
    const same = SELF_CHECK.every((text) => {
      const bytes = encoder.encode(text);
      return String(heapMerge(core, bytes)) === String(original.call(core, bytes));
    });
    if (!same) return false;
  } catch {
    return false;
  }
  core.bytePairMerge = (piece) => (piece.length > LONG_PIECE ? heapMerge(core, piece) : original.call(core, piece));
  core.addToMergeCache = (key, value) => {
    if (key.length <= LONG_PIECE) cache.call(core, key, value);
  };
  return true;
}

let loading;
const cl100k = () => {
  loading ??= import('gpt-tokenizer/encoding/cl100k_base')
    .then((tok) => {
      installHeapMerge(tok.default?.bytePairEncodingCoreProcessor);
      return tok;
    })
    .catch((error) => {
      loading = undefined; // try again on the next request
      throw error;
    });
  return loading;
};

/** `text` cut to at most `max` cl100k tokens; blank texts become one space (servers reject ""). */
function clip(tok, text, max) {
  if (text.trim() === '') return { tokens: 1, text: ' ' };
  const count = tok.isWithinTokenLimit(text, max, PLAIN);
  if (count !== false) return { tokens: count };
  const kept = [];
  for (const piece of tok.encodeGenerator(text, PLAIN)) {
    kept.push(...piece);
    if (kept.length >= max) break;
  }
  // A little under `max`: the cut may fall inside a character, whose remains are dropped, and
  // the prefix is tokenized again by the server.
  const clipped = tok.decode(kept.slice(0, Math.max(1, max - 16))).replace(/\uFFFD+$/u, '');
  return { tokens: max, text: clipped || ' ' };
}

if (!isMainThread) {
  let queue = Promise.resolve();
  parentPort.on('message', (request) => {
    // One request at a time (the client sends one at a time anyway).
    queue = queue.then(() => handle(request));
  });
}

async function handle({ id, inputs }) {
  try {
    const tok = await cl100k();
    parentPort.postMessage({ id, outputs: inputs.map(({ text, max }) => clip(tok, text, max)) });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
}
