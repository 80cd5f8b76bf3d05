import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isPlatformError } from '../src/errors.js';
import { normaliseDigest, ollamaRuntime } from '../src/local-models/ollama.js';
import { DEFAULT_LOCAL_MODEL_URL, defaultLocalModelBaseUrl } from '../src/local-models/runtime.js';
import { deleteLocalModel, listLocalModels } from '../src/local-models/service.js';
import { createGuardedFetch, type GuardedFetch, type HostResolver } from '../src/net/guarded-fetch.js';
import { createOutboundPolicy } from '../src/net/policy.js';
import { DeleteLocalModelResponse, ListLocalModelsResponse } from '../src/schemas/local-models.js';
import { forbidConnects, watchConnects } from './net-guard.js';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from './ollama-server.js';

/**
 * Every connection goes to 127.0.0.1 test servers: each test runs under `watchConnects`
 * (only loopback gets through) and the refusal tests under `forbidConnects` (nothing does), so
 * a broken guard could not reach 10.0.0.5 or 169.254.169.254 either.
 */

const events: string[] = [];
const connects: string[] = [];
/** A resolver that knows `ollama.test` (loopback) and `ollama.internal` (a private address). */
const resolver: HostResolver = async (hostname) => {
  events.push(`lookup:${hostname}`);
  if (hostname === 'ollama.test') return [{ address: '127.0.0.1', family: 4 }];
  if (hostname === 'ollama.internal') return [{ address: '10.0.0.5', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

let server: OllamaTestServer;
let guarded: GuardedFetch;

beforeEach(async () => {
  server = await startOllamaServer([ollamaTag('llama3.2:latest', 2_019_393_189), ollamaTag('llama3.2:1b', 1_321_098_329, '2024-09-25T12:30:00Z')]);
  // The fake runtime listens on 127.0.0.1: allowed as `--allow-host 127.0.0.1` does.
  guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }), { lookup: resolver });
  watchConnects(connects);
});

afterEach(async () => {
  vi.restoreAllMocks();
  events.length = 0;
  connects.length = 0;
  await guarded.close();
  await server.close();
});

const runtime = (timeoutMs?: number) => ollamaRuntime({ fetch: guarded, ...(timeoutMs ? { timeoutMs } : {}) });

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('listLocalModels', () => {
  it('lists the installed models with sha256-prefixed digests and ISO times', async () => {
    const result = await listLocalModels(runtime(), { baseUrl: server.url });
    expect(result.status).toBe(200);
    expect(ListLocalModelsResponse.parse(result.body)).toEqual(result.body);
    const [first, second] = server.models;
    expect(result.body).toEqual({
      success: true,
      models: [
        { name: 'llama3.2:latest', size: 2_019_393_189, digest: `sha256:${first?.digest}`, modified_at: '2024-05-01T17:00:00.123Z' },
        { name: 'llama3.2:1b', size: 1_321_098_329, digest: `sha256:${second?.digest}`, modified_at: '2024-09-25T12:30:00.000Z' },
      ],
    });
    for (const model of result.body.models) {
      expect(Object.keys(model).sort()).toEqual(['digest', 'modified_at', 'name', 'size']);
      expect(model.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
    expect(server.requests).toEqual([{ method: 'GET', path: '/api/tags', host: `127.0.0.1:${server.port}`, body: '' }]);
  });

  it('answers an empty array when no model is installed', async () => {
    server.models = [];
    expect(await listLocalModels(runtime(), { baseUrl: server.url })).toEqual({ status: 200, body: { success: true, models: [] } });
  });

  it('uses the default base URL when none (or an empty one) is given', async () => {
    const options = { defaultBaseUrl: server.url };
    expect((await listLocalModels(runtime(), {}, options)).body.models).toHaveLength(2);
    expect((await listLocalModels(runtime(), { baseUrl: '' }, options)).body.models).toHaveLength(2);
    expect((await listLocalModels(runtime(), undefined, options)).body.models).toHaveLength(2);
    expect(server.requests).toHaveLength(3);
  });

  it('reaches a runtime by host name through the checked address', async () => {
    const result = await listLocalModels(runtime(), { baseUrl: `http://ollama.test:${server.port}/` });
    expect(result.status).toBe(200);
    expect(result.body.models).toHaveLength(2);
    expect(server.requests[0]?.host).toBe(`ollama.test:${server.port}`);
    expect(events).toEqual(['lookup:ollama.test']);
    expect(connects).toEqual([`connect:ollama.test:${server.port}`]);
  });

  it('says the runtime is not running when nothing listens (503)', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    expect(await listLocalModels(runtime(), { baseUrl })).toEqual({
      status: 503,
      body: { success: false, error: `Local model runtime is not running at ${baseUrl}`, code: 'unavailable', models: [] },
    });
  });

  it('answers Failed to list models when the runtime fails (502)', async () => {
    server.tagsStatus = 500;
    const result = await listLocalModels(runtime(), { baseUrl: server.url });
    expect(result).toEqual({ status: 502, body: { success: false, error: 'Failed to list models', code: 'upstream_error', models: [] } });
    expect(ListLocalModelsResponse.parse(result.body)).toEqual(result.body);
  });

  it('answers Failed to list models when the runtime is too slow (504)', async () => {
    server.delayMs = 2_000;
    expect(await listLocalModels(runtime(100), { baseUrl: server.url })).toEqual({
      status: 504,
      body: { success: false, error: 'Failed to list models', code: 'timeout', models: [] },
    });
  });

  it('refuses a base URL that is not an http(s) URL (400)', async () => {
    for (const baseUrl of ['not a url', 'ftp://127.0.0.1:11434', 42]) {
      const result = await listLocalModels(runtime(), { baseUrl });
      expect(result.status, String(baseUrl)).toBe(400);
      expect(result.body).toMatchObject({ success: false, code: 'invalid_request', models: [] });
      expect(result.body.error).toMatch(/^baseUrl: /);
    }
    expect(server.requests).toEqual([]);
  });

  it('refuses private and metadata base URLs before any connection (400)', async () => {
    forbidConnects(events);
    const cases: [string, string][] = [
      ['http://10.0.0.5:11434', 'Refused to connect to 10.0.0.5: private address; allow it with --allow-host 10.0.0.5:11434'],
      ['http://169.254.169.254', 'Refused to connect to 169.254.169.254: cloud metadata address; allow it with --allow-host 169.254.169.254:80'],
      ['http://ollama.internal:11434', 'Refused to connect to ollama.internal (10.0.0.5): private address; allow it with --allow-host ollama.internal:11434'],
    ];
    for (const [baseUrl, error] of cases) {
      expect(await listLocalModels(runtime(), { baseUrl }), baseUrl).toEqual({
        status: 400,
        body: { success: false, error, code: 'invalid_request', models: [] },
      });
    }
    // The only thing that happened: the host name was resolved (IP literals are not).
    expect(events).toEqual(['lookup:ollama.internal']);
  });
});

describe('deleteLocalModel', () => {
  it('deletes a model named with its tag, sending { model, name }', async () => {
    const result = await deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl: server.url });
    expect(result).toEqual({ status: 200, body: { success: true, message: 'Model llama3.2:1b deleted' } });
    expect(DeleteLocalModelResponse.parse(result.body)).toEqual(result.body);
    expect(server.requests).toEqual([
      { method: 'DELETE', path: '/api/delete', host: `127.0.0.1:${server.port}`, body: JSON.stringify({ model: 'llama3.2:1b', name: 'llama3.2:1b' }) },
    ]);
    expect(server.models.map((m) => m.name)).toEqual(['llama3.2:latest']);
  });

  it('answers Model not found for a missing model or another tag (404)', async () => {
    for (const modelName of ['mistral:7b', 'llama3.2']) {
      expect(await deleteLocalModel(runtime(), { modelName, baseUrl: server.url })).toEqual({
        status: 404,
        body: { success: false, error: 'Model not found', code: 'not_found' },
      });
    }
    expect(server.models).toHaveLength(2);
  });

  it('answers Failed to delete model when the runtime fails (502) or is not running (503)', async () => {
    server.deleteStatus = 500;
    expect(await deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl: server.url })).toEqual({
      status: 502,
      body: { success: false, error: 'Failed to delete model', code: 'upstream_error' },
    });
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    expect(await deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl })).toEqual({
      status: 503,
      body: { success: false, error: 'Failed to delete model', code: 'unavailable' },
    });
  });

  it('uses the default base URL when none is given', async () => {
    const result = await deleteLocalModel(runtime(), { modelName: 'llama3.2:latest', baseUrl: '' }, { defaultBaseUrl: server.url });
    expect(result.status).toBe(200);
    expect(server.models.map((m) => m.name)).toEqual(['llama3.2:1b']);
  });

  it('refuses invalid input (400) naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /^modelName: /],
      [{ modelName: '' }, /^modelName: /],
      [{ modelName: 7 }, /^modelName: /],
      [{ modelName: 'x', baseUrl: 'not a url' }, /^baseUrl: must be an http or https URL/],
      [undefined, /^modelName: /],
    ];
    for (const [input, error] of cases) {
      const result = await deleteLocalModel(runtime(), input, { defaultBaseUrl: server.url });
      expect(result.status, JSON.stringify(input)).toBe(400);
      expect(result.body).toMatchObject({ success: false, code: 'invalid_request' });
      expect(result.body.error).toMatch(error);
    }
    expect(server.requests).toEqual([]);
  });

  it('refuses a disallowed base URL before any connection (400)', async () => {
    forbidConnects(events);
    expect(await deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl: 'http://ollama.internal:11434' })).toEqual({
      status: 400,
      body: {
        success: false,
        error: 'Refused to connect to ollama.internal (10.0.0.5): private address; allow it with --allow-host ollama.internal:11434',
        code: 'invalid_request',
      },
    });
    expect(events).toEqual(['lookup:ollama.internal']);
  });

  it('reaches an allow-listed private runtime (allow-list decides before connecting)', async () => {
    // 127.0.0.1 stands in for a private host here: allowlistOnly refuses it unless listed.
    const only = createGuardedFetch(createOutboundPolicy({ allowlistOnly: true, allowedHosts: ['ollama.test'] }), { lookup: resolver });
    try {
      const rt = ollamaRuntime({ fetch: only });
      expect((await listLocalModels(rt, { baseUrl: `http://ollama.test:${server.port}` })).status).toBe(200);
      expect(await listLocalModels(rt, { baseUrl: server.url })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    } finally {
      await only.close();
    }
  });
});

describe('ollamaRuntime errors', () => {
  it('tells not running, not found and other failures apart by code', async () => {
    const rt = runtime();
    const codeOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 'ok',
        (e: unknown) => (isPlatformError(e) ? e.code : 'not a PlatformError'),
      );
    expect(await codeOf(rt.list(`http://127.0.0.1:${await closedPort()}`))).toBe('unavailable');
    expect(await codeOf(rt.delete(server.url, 'nope:latest'))).toBe('not_found');
    server.tagsStatus = 404;
    expect(await codeOf(rt.list(server.url))).toBe('upstream_error');
    forbidConnects(events);
    expect(await codeOf(rt.list('http://10.0.0.5:11434'))).toBe('invalid_request');
    expect(events).toEqual([]);
  });

  it('never names a base URL with its user:password or query (an operator\'s OLLAMA_HOST may hold them)', async () => {
    const rt = ollamaRuntime({ fetch: async () => Promise.reject(new TypeError('fetch failed')) });
    const error = await rt.list('http://ops:PASS-SECRET@127.0.0.1:11434/?token=QUERY-SECRET').catch((e: unknown) => e);
    expect(isPlatformError(error) && { message: error.message, details: error.details }).toEqual({
      message: 'Local model runtime is not running at http://127.0.0.1:11434',
      details: { baseUrl: 'http://127.0.0.1:11434' },
    });
  });

  it('treats a missing or null models array as none', async () => {
    const rt = ollamaRuntime({ fetch: async () => new Response(JSON.stringify({ models: null })) });
    expect(await rt.list('http://127.0.0.1:1')).toEqual([]);
    const bad = ollamaRuntime({ fetch: async () => new Response('<html>') });
    await expect(bad.list('http://127.0.0.1:1')).rejects.toMatchObject({ code: 'upstream_error' });
  });
});

describe('normaliseDigest', () => {
  it('prefixes bare hex with sha256: and keeps prefixed digests', () => {
    const hex = `${'a'.repeat(60)}BCDE`;
    expect(normaliseDigest(hex)).toBe(`sha256:${hex.toLowerCase()}`);
    expect(normaliseDigest(`sha256:${'f'.repeat(64)}`)).toBe(`sha256:${'f'.repeat(64)}`);
    expect(normaliseDigest(`sha256-${'0'.repeat(64)}`)).toBe(`sha256:${'0'.repeat(64)}`);
  });
});

describe('defaultLocalModelBaseUrl', () => {
  it('reads OLLAMA_HOST as Ollama does', () => {
    expect(defaultLocalModelBaseUrl({})).toBe(DEFAULT_LOCAL_MODEL_URL);
    expect(DEFAULT_LOCAL_MODEL_URL).toBe('http://127.0.0.1:11434');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: '' })).toBe(DEFAULT_LOCAL_MODEL_URL);
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: '0.0.0.0' })).toBe('http://127.0.0.1:11434');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: '0.0.0.0:9999' })).toBe('http://127.0.0.1:9999');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: 'ollama.lan' })).toBe('http://ollama.lan:11434');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: 'ollama.lan:80' })).toBe('http://ollama.lan');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: 'http://ollama.lan' })).toBe('http://ollama.lan');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: 'https://models.example.com/ollama/' })).toBe('https://models.example.com/ollama');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: '[::]:11434' })).toBe('http://[::1]:11434');
    expect(defaultLocalModelBaseUrl({ OLLAMA_HOST: 'ftp://x' })).toBe(DEFAULT_LOCAL_MODEL_URL);
  });
});
