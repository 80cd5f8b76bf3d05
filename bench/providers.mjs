// What each provider adapter adds to the first token: for every adapter of
// @agent-platform/adapters-models present (built), the time to the first `text` event of
// `chatModel.stream()` against a loopback fake of its provider, and the time to the first body
// chunk carrying answer text of `fetch` sending the same request bytes (method, URL, headers and
// body, as the adapter sent them in a warm-up call) to the same fake; every side of every adapter
// interleaved request by request (bench/completions.mjs's `interleaved`), p50/p99. Reported per
// adapter: the ms it adds (adapter − fetch) and that minus the openai (Chat Completions) adapter's
// added ms, the baseline: the target is ≤ 1 ms beyond it. The fakes (bench/provider-fakes.mjs)
// run in a child process. BENCH_PROVIDER_REQUESTS requests per side (default 1000).
// Adding a provider: one line in ADAPTERS (its export, its factory, its options on the fake's
// URL, its wire format), and a format in bench/provider-fakes.mjs if it speaks a new one.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startServerScript } from './child.mjs';
import { interleaved, round } from './completions.mjs';
import { FORMATS } from './provider-fakes.mjs';

const KEY = 'bench-key-0123456789';

/** The adapters, in the package's export names; `options(url)` points one at the fakes' server. */
const ADAPTERS = [
  { name: 'openai', entry: './openai', factory: 'openaiChatModel', format: 'openai-chat', options: (url) => ({ apiKey: KEY, baseURL: `${url}/openai/v1` }) },
  { name: 'anthropic', entry: './anthropic', factory: 'anthropicChatModel', format: 'anthropic', options: (url) => ({ apiKey: KEY, baseURL: `${url}/anthropic/v1` }) },
  { name: 'azure', entry: './azure', factory: 'azureChatModel', format: 'openai-chat', options: (url) => ({ apiKey: KEY, baseURL: `${url}/azure/openai` }) },
  {
    name: 'bedrock',
    entry: './bedrock',
    factory: 'bedrockChatModel',
    format: 'bedrock-converse',
    options: (url) => ({ region: 'us-east-1', accessKeyId: 'AKIDBENCH0123456789', secretAccessKey: KEY, baseURL: `${url}/bedrock` }),
  },
  { name: 'google', entry: './google', factory: 'googleChatModel', format: 'gemini', options: (url) => ({ apiKey: KEY, baseURL: `${url}/google/v1beta` }) },
  { name: 'openai-responses', entry: './openai-responses', factory: 'openaiResponsesChatModel', format: 'responses', options: (url) => ({ apiKey: KEY, baseURL: `${url}/responses/v1` }) },
];

const PACKAGE = new URL('../packages/adapters-models/', import.meta.url);
const REQUEST = { model: 'bench-model', messages: [{ role: 'user', content: 'Say the words.' }], maxTokens: 256 };

/** The adapter's factory from the built package, or undefined when the package has no such export (yet). */
async function factoryOf(adapter) {
  const exported = JSON.parse(readFileSync(new URL('package.json', PACKAGE), 'utf8')).exports?.[adapter.entry];
  if (!exported?.import) return undefined;
  const module = await import(new URL(exported.import, PACKAGE).href);
  return module[adapter.factory];
}

/** The first request the adapter sends, as bytes to replay: URL, method, headers, body. */
async function recordRequest(create, url) {
  let sent;
  const model = create({
    fetch: (input, init) => {
      sent ??= { url: String(input instanceof Request ? input.url : input), method: init?.method ?? 'GET', headers: Object.fromEntries(new Headers(init?.headers)), body: init?.body };
      return fetch(input, init);
    },
  });
  for await (const _ of model.stream(REQUEST));
  if (typeof sent?.body !== 'string') throw new Error(`bench providers: the request to ${url} had no text body`);
  return sent;
}

/** One call of the adapter: ms to its first text event, and to the end. */
async function throughAdapter(model) {
  const t0 = performance.now();
  let ttft;
  for await (const event of model.stream(REQUEST)) if (event.type === 'text') ttft ??= performance.now() - t0;
  if (ttft === undefined) throw new Error('bench providers: the adapter yielded no text');
  return { ttft, total: performance.now() - t0 };
}

/** The same request by fetch: ms to the first body chunk carrying answer text (`marker`), and to the end. */
async function throughFetch(request, marker) {
  const t0 = performance.now();
  const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  if (!res.ok) throw new Error(`bench providers: ${request.url} answered ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let ttft;
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (ttft === undefined) {
      buffer += decoder.decode(value, { stream: true });
      if (buffer.includes(marker)) ttft = performance.now() - t0;
    }
  }
  if (ttft === undefined) throw new Error(`bench providers: no answer text from ${request.url}`);
  return { ttft, total: performance.now() - t0 };
}

export async function providerOverhead() {
  const n = Number(process.env.BENCH_PROVIDER_REQUESTS ?? 1000);
  const fakes = await startServerScript(fileURLToPath(new URL('provider-fakes.mjs', import.meta.url)), 'providers', '');
  try {
    const present = [];
    for (const adapter of ADAPTERS) {
      const factory = await factoryOf(adapter);
      if (!factory) continue;
      const create = (extra = {}) => factory({ ...adapter.options(fakes.url), maxRetries: 0, ...extra });
      present.push({ ...adapter, model: create(), request: await recordRequest(create, fakes.url) });
    }
    const sides = {};
    for (const a of present) {
      sides[`${a.name} adapter`] = () => throughAdapter(a.model);
      sides[`${a.name} fetch`] = () => throughFetch(a.request, FORMATS[a.format].marker);
    }
    const samples = await interleaved(n, sides);
    const at = (name, p) => samples[name].ttft[`p${p}`];
    const added = Object.fromEntries(present.map((a) => [a.name, { p50: at(`${a.name} adapter`, 50) - at(`${a.name} fetch`, 50), p99: at(`${a.name} adapter`, 99) - at(`${a.name} fetch`, 99) }]));
    const baseline = added.openai;
    const adapters = present.map((a) => ({
      adapter: a.name,
      format: a.format,
      ttftMs: {
        adapter: { p50: round(at(`${a.name} adapter`, 50)), p99: round(at(`${a.name} adapter`, 99)) },
        fetch: { p50: round(at(`${a.name} fetch`, 50)), p99: round(at(`${a.name} fetch`, 99)) },
      },
      addedMs: { p50: round(added[a.name].p50), p99: round(added[a.name].p99) },
      beyondOpenaiMs: baseline ? { p50: round(added[a.name].p50 - baseline.p50), p99: round(added[a.name].p99 - baseline.p99) } : undefined,
    }));
    const worst = Math.max(...adapters.map((a) => a.beyondOpenaiMs?.p50 ?? 0));
    for (const a of adapters) {
      console.log(
        `  ${a.adapter.padEnd(17)} TTFT p50 ${a.ttftMs.adapter.p50} ms (fetch ${a.ttftMs.fetch.p50}), added p50 ${a.addedMs.p50} p99 ${a.addedMs.p99}; beyond openai p50 ${a.beyondOpenaiMs?.p50} p99 ${a.beyondOpenaiMs?.p99}`,
      );
    }
    return {
      name: 'providers',
      requestsPerSide: n,
      adapters,
      // Not a ratio: the most ms an adapter adds at p50 beyond the openai adapter, against the 1 ms target.
      ratio: round(worst),
      target: 1,
      lowerIsBetter: true,
    };
  } finally {
    await fakes.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(await providerOverhead(), null, 2));
