// A fake OpenAI-compatible embeddings server on 127.0.0.1 for benchmarks of the server process:
// bag-of-words vectors (64 dimensions, unit length), answered at once, so a benchmark measures
// the service, not a model. Each server under test gets its own base URL
// (`urlFor(name)` = http://127.0.0.1:PORT/<name>/v1, for OPENAI_BASE_URL), and the texts each one
// embedded are counted: `counts(names)` tells whether a text was embedded more than once.
import { createServer } from 'node:http';

export const FAKE_DIMENSIONS = 64;

/** Words hashed into `dimensions` slots, unit length (the tests' bagOfWords, in JavaScript). */
export function bagOfWords(text, dimensions = FAKE_DIMENSIONS) {
  const v = new Float32Array(dimensions);
  for (const w of text.toLowerCase().match(/\w+/g) ?? ['_']) {
    const slot = [...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % dimensions;
    v[slot] += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** The OpenAI embeddings answer for `texts` (the request's `input`, as a list): bag-of-words vectors. */
export function embeddingsAnswer(request, texts = Array.isArray(request.input) ? request.input : [request.input]) {
  return {
    object: 'list',
    model: request.model,
    // The openai client asks for base64 (little-endian float32) unless told otherwise.
    data: texts.map((t, index) => {
      const vector = bagOfWords(t);
      return { object: 'embedding', index, embedding: request.encoding_format === 'float' ? [...vector] : Buffer.from(vector.buffer).toString('base64') };
    }),
    usage: { prompt_tokens: texts.length, total_tokens: texts.length },
  };
}

export async function startFakeEmbedder() {
  /** name → text → times embedded */
  const seen = new Map();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const name = req.url.split('/')[1] ?? '';
      const request = JSON.parse(body);
      const texts = Array.isArray(request.input) ? request.input : [request.input];
      const mine = seen.get(name) ?? new Map();
      seen.set(name, mine);
      for (const t of texts) mine.set(t, (mine.get(t) ?? 0) + 1);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(embeddingsAnswer(request, texts)));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    urlFor: (name) => `${base}/${name}/v1`,
    /** Every text the servers `names` embedded (chunks and search queries), with how many times, together. */
    counts(names) {
      const out = new Map();
      for (const name of names) for (const [t, n] of seen.get(name) ?? []) out.set(t, (out.get(t) ?? 0) + n);
      return out;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}
