import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HostileUpstreams, startHostileUpstreams, TATTLE_MARKER } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * What a user's own upstreams send back cannot exhaust the server: a real server (default
 * limits) against hostile loopback upstreams (`startHostileUpstreams`): a model server that
 * answers 50 MB without streaming, an endless streamed answer and an endless event line; MCP
 * servers (streamable HTTP and legacy SSE) that send a 100 MB tool list or tool result or a line
 * that never ends; a local runtime whose listing never ends; a vector store and an embeddings
 * server that answer 100 MB. Each is answered with an error naming the limit and its flag,
 * while this process's resident memory stays within a bound, /health keeps answering, and the
 * next ordinary request works. Every URL a user gives points at 127.0.0.1, which the server is
 * told to allow (`--allow-host 127.0.0.1`).
 *
 * The server runs in this process: its RSS is sampled every 10 ms while each hostile call runs
 * (the peak over the baseline just before), and /health is asked every 20 ms meanwhile (its
 * slowest answer is how long the event loop was held). Without the limits these calls took
 * seconds to minutes (/health held for up to 54 s) and 450-570 MB and more (measured by
 * taking the limits out); the bounds below are far above what the limits let through (at most
 * 34 MB and 242 ms here) and far below that. Speed targets proper are measured by
 * `pnpm bench hostile` (docs/BENCHMARKS.md), not here.
 */

const MiB = 1024 * 1024;
/** Peak RSS growth allowed while one hostile call runs. */
const RSS_BOUND = 128 * MiB;
/** Slowest /health answer allowed meanwhile (generous: this machine is shared; unbounded reads held it for seconds). */
const HEALTH_BOUND_MS = 1500;

let s: TestServer;
let hostile: HostileUpstreams;
let upstream: FakeUpstream;
/** A project whose model is the ordinary upstream: "the next normal request". */
let normalProject: string;

async function credential(baseUrl: string): Promise<string> {
  const res = await s.call('POST', '/api/v1/credentials', { body: { name: `c${Math.random()}`, provider: 'openai', apiKey: 'sk-test', baseUrl } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.credential.id;
}

async function project(baseUrl: string, extra: Record<string, unknown> = {}): Promise<string> {
  const credentialId = await credential(baseUrl);
  const res = await s.call('POST', '/api/projects/create', { body: { name: `p${Math.random()}`, model: 'gpt-test', provider: 'openai', credentialId, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.project.id;
}

const complete = (model: string, extra: Record<string, unknown> = {}) => s.call('POST', '/api/v1/chat/completions', { body: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });

/**
 * Runs `work` (a hostile call) while sampling RSS and probing /health, then checks the bounds
 * and that an ordinary completion still works.
 */
async function bounded<T>(work: () => Promise<T>): Promise<T> {
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  let probing = true;
  const latencies: number[] = [];
  const prober = (async () => {
    while (probing) {
      const started = performance.now();
      const res = await fetch(`${s.url}/health`);
      await res.text();
      expect(res.status).toBe(200);
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let value: T;
  try {
    value = await work();
  } finally {
    probing = false;
    await prober;
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage.rss());
  expect(peak - baseline, `RSS grew by ${((peak - baseline) / MiB).toFixed(0)} MiB`).toBeLessThan(RSS_BOUND);
  expect(latencies.length).toBeGreaterThan(0);
  expect(Math.max(...latencies), `slowest /health: ${Math.max(...latencies).toFixed(0)} ms`).toBeLessThan(HEALTH_BOUND_MS);
  const next = await complete(normalProject);
  expect(next.status, JSON.stringify(next.body)).toBe(200);
  expect(next.body.choices[0].message.content).toBe('You said: hi');
  return value;
}

/** The message of an error answer, whichever form the route gives it in. */
const messageOf = (body: any): string => body?.error?.message ?? body?.message ?? body?.error ?? '';

beforeAll(async () => {
  hostile = await startHostileUpstreams();
  upstream = await startUpstream();
  s = await startTestServer({
    outbound: { allowedHosts: ['127.0.0.1'] },
    // The operator's embeddings server (`openai:` embedding models) is the hostile one too.
    env: { ...process.env, OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `${hostile.url}/embed/0/v1` },
  });
  normalProject = await project(upstream.url);
});

afterAll(async () => {
  await s?.stop();
  await Promise.all([hostile?.close(), upstream?.close()]);
});

describe('a model server that answers too much', () => {
  it('50 MB not streamed: 502 naming --max-model-answer, read no further than the limit', async () => {
    const model = await project(`${hostile.url}/model/json/${50 * MiB}/v1`);
    const sentBefore = hostile.sent();
    const res = await bounded(() => complete(model));
    expect(res.status).toBe(502);
    expect(messageOf(res.body)).toMatch(/^Model provider openai \(http:\/\/127\.0\.0\.1:\d+\/model\/json\/\d+\/v1\) sent an answer larger than 4194304 bytes, the limit set by --max-model-answer/);
    // The upstream was cut off: it got out the limit and what the sockets hold, not 50 MB.
    expect(hostile.sent() - sentBefore).toBeLessThan(20 * MiB);
    // Its models list (the credential test route and the model picker read it) alike.
    const credentialId = (await s.call('GET', `/api/v1/projects/${model}`)).body.project.credentialId;
    const tested = await bounded(() => s.call('POST', `/api/v1/credentials/${credentialId}/test`));
    expect(tested.body).toMatchObject({ ok: false, code: 'upstream_error', message: expect.stringMatching(/sent an answer larger than 4194304 bytes, the limit set by --max-model-answer/) });
  });

  it('an endless streamed answer: cut at --max-message, whether the client streams or not, and nothing is stored', async () => {
    const model = await project(`${hostile.url}/model/stream/v1`);
    const res = await bounded(() => complete(model));
    expect(res.status).toBe(502);
    expect(messageOf(res.body)).toMatch(/^The model gpt-test sent an answer larger than 1048576 bytes, the limit set by --max-message/);

    const streamed = await bounded(async () => {
      const r = await fetch(`${s.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return r.text();
    });
    // The client got the text up to the limit, then the error, and the stream ended.
    expect(streamed.length).toBeLessThan(3 * MiB);
    expect(streamed).toMatch(/sent an answer larger than 1048576 bytes, the limit set by --max-message/);

    // A chat keeps nothing of a turn that failed.
    const chat = await s.call('POST', '/api/chats', { body: { projectId: model } });
    const inChat = await bounded(() => complete(model, { chatId: chat.body.chat.id }));
    expect(inChat.status).toBe(502);
    expect((await s.call('GET', `/api/chats/${chat.body.chat.id}/messages`)).body.messages).toEqual([]);
  });

  it('an event line that never ends: 502 naming --max-model-answer', async () => {
    const model = await project(`${hostile.url}/model/line/v1`);
    const res = await bounded(() => complete(model));
    expect(res.status).toBe(502);
    expect(messageOf(res.body)).toMatch(/sent an event larger than 4194304 bytes, the limit set by --max-model-answer/);
  });
});

describe('an MCP server that answers too much', () => {
  const add = (projectId: string, transport: string, url: string) => s.call('POST', '/api/mcp/add-server', { body: { projectId, name: 'hostile', transport, url } });

  it.each([
    ['http', 'a 100 MB tool list', '/mcp/tools-json/0', 'an answer'],
    ['http', 'a tool list line that never ends', '/mcp/tools-line/0', 'an event'],
    ['sse', 'a tool list line that never ends', '/mcp-sse/tools-line/0/sse', 'an event'],
  ])('%s, %s: the server is not added, 502 naming --max-mcp-message', async (transport, _what, path, kind) => {
    const projectId = await project(upstream.url);
    const res = await bounded(() => add(projectId, transport, `${hostile.url}${path}`));
    expect(res.status, JSON.stringify(res.body)).toBe(502);
    expect(messageOf(res.body)).toMatch(
      new RegExp(`^MCP server at http://127\\.0\\.0\\.1:\\d+${path.replace(/\//g, '\\/')} sent ${kind} larger than 4194304 bytes, the limit set by --max-mcp-message`),
    );
    expect((await s.call('GET', `/api/mcp/servers?projectId=${projectId}`)).body.servers).toEqual([]);
  });

  it.each([
    ['http', '100 MB', `/mcp/result-json/${100 * MiB}`, /sent an answer larger than 4194304 bytes, the limit set by --max-mcp-message/],
    ['sse', '100 MB', `/mcp-sse/result-json/${100 * MiB}/sse`, /sent an event larger than 4194304 bytes, the limit set by --max-mcp-message/],
    ['http', '2 MB', `/mcp/result-json/${2 * MiB}`, /sent a result larger than 1048576 bytes, the limit set by --max-mcp-tool-result/],
  ])('%s, a tool result of %s: the model gets the error naming the limit, the chat stores only that', async (transport, _size, path, expected) => {
    const projectId = await project(upstream.url);
    const added = await add(projectId, transport, `${hostile.url}${path}`);
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const chat = await s.call('POST', '/api/chats', { body: { projectId } });
    upstream.script({ toolCalls: [{ name: 'mcp__hostile__dump', arguments: '{}' }] }, { text: 'done' });
    const res = await bounded(() => complete(projectId, { chatId: chat.body.chat.id }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // What the model was given as the tool's result: the error, not the answer.
    const answered = upstream.requests.findLast((r) => r.messages.some((m: { role: string }) => m.role === 'tool'));
    const toolMessage = answered?.messages.find((m: { role: string }) => m.role === 'tool');
    expect(toolMessage.content).toMatch(expected);
    const stored = (await s.call('GET', `/api/chats/${chat.body.chat.id}/messages`)).body.messages;
    expect(JSON.stringify(stored).length).toBeLessThan(10_000);
    expect(stored.find((m: { role: string }) => m.role === 'tool').content).toMatch(expected);
  });
});

describe('other upstreams that answer too much', () => {
  it('a local runtime whose listing never ends: 502 naming --max-runtime-answer', async () => {
    const res = await bounded(() => s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(`${hostile.url}/runtime`)}`));
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, code: 'upstream_error', models: [] });
    expect(res.body.error).toMatch(/^Failed to list models: Local model runtime at http:\/\/127\.0\.0\.1:\d+\/runtime sent an answer larger than 1048576 bytes, the limit set by --max-runtime-answer/);
  });

  it('a vector store answering 100 MB: the settings are refused naming --max-vector-answer', async () => {
    const projectId = await project(upstream.url);
    const res = await bounded(() =>
      s.call('PUT', '/api/knowledge/settings', {
        body: { projectId, settings: { vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: `${hostile.url}/vector/0`, indexName: 'hostile' } } },
      }),
    );
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(
      /^Invalid vectorstore configuration: Qdrant at http:\/\/127\.0\.0\.1:\d+\/vector\/0 sent an answer larger than 16777216 bytes, the limit set by --max-vector-answer/,
    );
  });

  it('an embeddings server answering 100 MB: the document fails naming --max-embeddings-answer', async () => {
    const projectId = await project(upstream.url);
    const settings = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { embeddingModel: 'openai:text-embedding-3-small', ...s.ownVectorStore() } } });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const created = await bounded(() => s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'a.md', fileType: 'md', sourceType: 'upload', content: '# A\n\nSome text.' } }));
    expect(created.body).toMatchObject({
      success: false,
      status: 'failed',
      message: expect.stringMatching(
        /^Failed to index document: Embedding upstream http:\/\/127\.0\.0\.1:\d+\/embed\/0\/v1 sent an answer larger than 16777216 bytes, the limit set by --max-embeddings-answer/,
      ),
    });
  });
});

describe("error answers never quote an upstream's body", () => {
  /** Every upstream here answers the status with a body carrying TATTLE_MARKER (another service's data). */
  const tattler = (status: number, rest = '') => `${hostile.url}/tattle/${status}${rest}`;
  const quiet = (res: { body: unknown }, status: number) => {
    expect(JSON.stringify(res.body)).not.toContain(TATTLE_MARKER);
    expect(JSON.stringify(res.body)).toContain(String(status));
  };

  it('a model server: completions, the credential test and the models list give the status, never the body', async () => {
    const model = await project(tattler(500, '/v1'));
    const res = await complete(model);
    expect(res.status).toBe(502);
    expect(messageOf(res.body)).toMatch(/answered HTTP 500/);
    quiet(res, 500);
    const credentialId = await credential(tattler(401, '/v1'));
    const tested = await s.call('POST', `/api/v1/credentials/${credentialId}/test`);
    expect(tested.body).toMatchObject({ ok: false, status: 401, message: expect.stringMatching(/refused the credentials \(HTTP 401\)/) });
    quiet(tested, 401);
    const listed = await s.call('GET', `/api/v1/credentials/${credentialId}/models`);
    expect(listed.status).toBe(502);
    quiet(listed, 401);
  });

  it('the local runtime: the status, never the body', async () => {
    const res = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(tattler(500))}`);
    expect(res.status).toBe(502);
    expect(res.body.error).toBe('Failed to list models');
    expect(JSON.stringify(res.body)).not.toContain(TATTLE_MARKER);
  });

  it.each([
    ['qdrant', 'tattle'],
    ['chroma', 'tattle'],
    ['weaviate', 'Tattle'],
  ])('a vector store (%s): the settings are refused with the status, never the body', async (provider, indexName) => {
    const projectId = await project(upstream.url);
    // Chroma takes a server's root URL only: the same tattler, answering at its root.
    const root = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: TATTLE_MARKER, message: TATTLE_MARKER }));
    });
    await new Promise<void>((resolve) => root.listen(0, '127.0.0.1', resolve));
    const endpoint = provider === 'chroma' ? `http://127.0.0.1:${(root.address() as AddressInfo).port}` : tattler(500);
    const res = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { vectorstoreProvider: provider, vectorStoreConfig: { endpoint, indexName } } } }).finally(() => {
      root.closeAllConnections();
      root.close();
    });
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    quiet(res, 500);
  });

  it.each([
    ['http', '/mcp'],
    ['sse', '/sse'],
  ])('an MCP server (%s): not added, with the status, never the body', async (transport, path) => {
    const projectId = await project(upstream.url);
    const res = await s.call('POST', '/api/mcp/add-server', { body: { projectId, name: 'tattler', transport, url: tattler(500, path) } });
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    quiet(res, 500);
  });
});
