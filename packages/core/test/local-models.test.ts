import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isPlatformError, PlatformError } from '../src/errors.js';
import { AgentPlatform, type StorageAdapter } from '../src/index.js';
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

/** How a call failed: its code and message (the text the route answers in `error`), or 'resolved'. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (e: unknown) => (isPlatformError(e) ? { code: e.code, message: e.message } : e),
  );

describe('listLocalModels', () => {
  it('lists the installed models with sha256-prefixed digests and ISO times', async () => {
    const result = await listLocalModels(runtime(), { baseUrl: server.url });
    expect(ListLocalModelsResponse.parse(result)).toEqual(result);
    const [first, second] = server.models;
    expect(result).toEqual({
      success: true,
      models: [
        { name: 'llama3.2:latest', size: 2_019_393_189, digest: `sha256:${first?.digest}`, modified_at: '2024-05-01T17:00:00.123Z' },
        { name: 'llama3.2:1b', size: 1_321_098_329, digest: `sha256:${second?.digest}`, modified_at: '2024-09-25T12:30:00.000Z' },
      ],
    });
    for (const model of result.models) {
      expect(Object.keys(model).sort()).toEqual(['digest', 'modified_at', 'name', 'size']);
      expect(model.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
    expect(server.requests).toEqual([{ method: 'GET', path: '/api/tags', host: `127.0.0.1:${server.port}`, body: '' }]);
  });

  it('answers an empty array when no model is installed', async () => {
    server.models = [];
    expect(await listLocalModels(runtime(), { baseUrl: server.url })).toEqual({ success: true, models: [] });
  });

  it('uses the default base URL when none is given', async () => {
    expect((await listLocalModels(runtime(), {}, { defaultBaseUrl: server.url })).models).toHaveLength(2);
    expect(server.requests).toHaveLength(1);
  });

  it('reaches a runtime by host name through the checked address', async () => {
    const result = await listLocalModels(runtime(), { baseUrl: `http://ollama.test:${server.port}/` });
    expect(result.models).toHaveLength(2);
    expect(server.requests[0]?.host).toBe(`ollama.test:${server.port}`);
    expect(events).toEqual(['lookup:ollama.test']);
    expect(connects).toEqual([`connect:ollama.test:${server.port}`]);
  });

  it('says the runtime is not running when nothing listens (unavailable)', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    expect(await failure(listLocalModels(runtime(), { baseUrl }))).toEqual({ code: 'unavailable', message: `Local model runtime is not running at ${baseUrl}` });
  });

  it('answers Failed to list models when the runtime fails (upstream_error)', async () => {
    server.tagsStatus = 500;
    expect(await failure(listLocalModels(runtime(), { baseUrl: server.url }))).toEqual({ code: 'upstream_error', message: 'Failed to list models' });
  });

  it('answers Failed to list models when the runtime is too slow (timeout)', async () => {
    server.delayMs = 2_000;
    expect(await failure(listLocalModels(runtime(100), { baseUrl: server.url }))).toEqual({ code: 'timeout', message: 'Failed to list models' });
  });

  it('answers a runtime failure of another code as upstream_error, and a bug as internal', async () => {
    const failing = (error: unknown) => ({ list: async () => Promise.reject(error), delete: async () => Promise.reject(error) });
    const odd = failing(new PlatformError('conflict', 'the runtime said something odd'));
    expect(await failure(listLocalModels(odd, { baseUrl: server.url }))).toEqual({ code: 'upstream_error', message: 'Failed to list models' });
    expect(await failure(deleteLocalModel(odd, { modelName: 'm', baseUrl: server.url }))).toEqual({ code: 'upstream_error', message: 'Failed to delete model' });
    const bug = failing(new TypeError('x is undefined'));
    expect(await failure(listLocalModels(bug, { baseUrl: server.url }))).toEqual({ code: 'internal', message: 'Failed to list models' });
    expect(await failure(deleteLocalModel(bug, { modelName: 'm', baseUrl: server.url }))).toEqual({ code: 'internal', message: 'Failed to delete model' });
  });

  it('refuses private and metadata base URLs before any connection (invalid_request)', async () => {
    forbidConnects(events);
    const cases: [string, string][] = [
      ['http://10.0.0.5:11434', 'Refused to connect to 10.0.0.5: private address; allow it with --allow-host 10.0.0.5:11434'],
      ['http://169.254.169.254', 'Refused to connect to 169.254.169.254: cloud metadata address; allow it with --allow-host 169.254.169.254:80'],
      ['http://ollama.internal:11434', 'Refused to connect to ollama.internal (10.0.0.5): private address; allow it with --allow-host ollama.internal:11434'],
    ];
    for (const [baseUrl, message] of cases) {
      expect(await failure(listLocalModels(runtime(), { baseUrl })), baseUrl).toEqual({ code: 'invalid_request', message });
    }
    // The only thing that happened: the host name was resolved (IP literals are not).
    expect(events).toEqual(['lookup:ollama.internal']);
  });
});

describe('deleteLocalModel', () => {
  it('deletes a model named with its tag, sending { model, name }', async () => {
    const result = await deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl: server.url });
    expect(result).toEqual({ success: true, message: 'Model llama3.2:1b deleted' });
    expect(DeleteLocalModelResponse.parse(result)).toEqual(result);
    expect(server.requests).toEqual([{ method: 'DELETE', path: '/api/delete', host: `127.0.0.1:${server.port}`, body: JSON.stringify({ model: 'llama3.2:1b', name: 'llama3.2:1b' }) }]);
    expect(server.models.map((m) => m.name)).toEqual(['llama3.2:latest']);
  });

  it('answers Model not found for a missing model or another tag (not_found)', async () => {
    for (const modelName of ['mistral:7b', 'llama3.2']) {
      expect(await failure(deleteLocalModel(runtime(), { modelName, baseUrl: server.url }))).toEqual({ code: 'not_found', message: 'Model not found' });
    }
    expect(server.models).toHaveLength(2);
  });

  it('answers Failed to delete model when the runtime fails (upstream_error) or is not running (unavailable)', async () => {
    server.deleteStatus = 500;
    expect(await failure(deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl: server.url }))).toEqual({ code: 'upstream_error', message: 'Failed to delete model' });
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    expect(await failure(deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl }))).toEqual({ code: 'unavailable', message: 'Failed to delete model' });
  });

  it('uses the default base URL when none is given', async () => {
    expect(await deleteLocalModel(runtime(), { modelName: 'llama3.2:latest' }, { defaultBaseUrl: server.url })).toEqual({ success: true, message: 'Model llama3.2:latest deleted' });
    expect(server.models.map((m) => m.name)).toEqual(['llama3.2:1b']);
  });

  it('refuses a disallowed base URL before any connection (invalid_request)', async () => {
    forbidConnects(events);
    expect(await failure(deleteLocalModel(runtime(), { modelName: 'llama3.2:1b', baseUrl: 'http://ollama.internal:11434' }))).toEqual({
      code: 'invalid_request',
      message: 'Refused to connect to ollama.internal (10.0.0.5): private address; allow it with --allow-host ollama.internal:11434',
    });
    expect(events).toEqual(['lookup:ollama.internal']);
  });

  it('reaches an allow-listed private runtime (allow-list decides before connecting)', async () => {
    // 127.0.0.1 stands in for a private host here: allowlistOnly refuses it unless listed.
    const only = createGuardedFetch(createOutboundPolicy({ allowlistOnly: true, allowedHosts: ['ollama.test'] }), { lookup: resolver });
    try {
      const rt = ollamaRuntime({ fetch: only });
      expect((await listLocalModels(rt, { baseUrl: `http://ollama.test:${server.port}` })).models).toHaveLength(2);
      expect(await failure(listLocalModels(rt, { baseUrl: server.url }))).toMatchObject({ code: 'invalid_request' });
    } finally {
      await only.close();
    }
  });
});

describe("AgentPlatform's local model methods", () => {
  const caller = { userId: 'user_1' };
  /** A platform with only what the local model methods use (they read no storage). */
  async function withPlatform(run: (platform: AgentPlatform) => Promise<void>): Promise<void> {
    const storage = { close: async () => {} } as unknown as StorageAdapter;
    const fetch = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }), { lookup: resolver });
    const platform = new AgentPlatform({ storage, fetch, localModelUrl: server.url });
    try {
      await run(platform);
    } finally {
      await platform.close();
    }
  }

  it('use the default base URL when none, or an empty one, is given', async () => {
    await withPlatform(async (platform) => {
      expect((await platform.listLocalModels(caller, {})).models).toHaveLength(2);
      expect((await platform.listLocalModels(caller, { baseUrl: '' })).models).toHaveLength(2);
      expect((await platform.listLocalModels(caller)).models).toHaveLength(2);
      expect(server.requests).toHaveLength(3);
      expect(await platform.deleteLocalModel(caller, { modelName: 'llama3.2:latest', baseUrl: '' })).toEqual({ success: true, message: 'Model llama3.2:latest deleted' });
      expect(server.models.map((m) => m.name)).toEqual(['llama3.2:1b']);
    });
  });

  it('refuse invalid input naming the field (invalid_request), before any request', async () => {
    await withPlatform(async (platform) => {
      for (const baseUrl of ['not a url', 'ftp://127.0.0.1:11434', 42]) {
        const refused = await failure(platform.listLocalModels(caller, { baseUrl } as never));
        expect(refused, String(baseUrl)).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^baseUrl: /) });
      }
      const cases: [unknown, RegExp][] = [
        [{}, /^modelName: /],
        [{ modelName: '' }, /^modelName: /],
        [{ modelName: 7 }, /^modelName: /],
        [{ modelName: 'x', baseUrl: 'not a url' }, /^baseUrl: must be an http or https URL/],
        [undefined, /^modelName: /],
      ];
      for (const [input, message] of cases) {
        expect(await failure(platform.deleteLocalModel(caller, input as never)), JSON.stringify(input)).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message) });
      }
      expect(server.requests).toEqual([]);
    });
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

  it("never names a base URL with its user:password or query (an operator's OLLAMA_HOST may hold them)", async () => {
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
