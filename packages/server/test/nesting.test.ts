import { get } from 'node:http';
import { exceedsNesting, MAX_NESTING_DEPTH } from '@agent-platform/core/internal';
import { deepJson, type NestingShape } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createApp } from '../src/app.js';
import { queryObject } from '../src/body.js';
import type { ApiRoute } from '../src/route.js';
import { apiRoutes } from '../src/routes.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * Fuzz test of nesting depth per route: every route of the table that takes a body gets bodies
 * nested 65, 1,000 and 100,000 deep, with the deep value at the top level and at every field its
 * body schema declares (found by walking the zod schema), and must answer 400 naming the limit;
 * a body exactly at the limit must get past the parser (whatever the route then says, never 500).
 */

const LIMIT_MESSAGE = `body: nested deeper than ${MAX_NESTING_DEPTH} levels`;
const OVER = [MAX_NESTING_DEPTH + 1, 1_000, 100_000];
const SHAPES: readonly NestingShape[] = ['arrays', 'objects', 'mixed'];

type Path = readonly (string | number)[];

/** zod v4 schema kinds that wrap another (`innerType`) without changing where values go. */
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/**
 * Every position of a body schema a value can be put at: the body itself, each declared field,
 * the first element of each array, a key of each record, and an undeclared key of each object
 * (strict objects refuse it, others strip or keep it: all three must hold).
 */
function positions(schema: z.ZodType): Path[] {
  const found = new Map<string, Path>();
  const add = (path: Path) => found.set(JSON.stringify(path), path);
  const walk = (s: z.ZodType, path: Path): void => {
    if (path.length > 8) return;
    // zod v4's definition object: `type` names the kind of schema.
    const def = (s as unknown as { _zod: { def: Record<string, any> } })._zod.def;
    const inner = WRAPPERS.has(def.type) ? def.innerType : def.type === 'pipe' ? def.in : def.type === 'lazy' ? def.getter() : undefined;
    if (inner) walk(inner, path);
    else if (def.type === 'union') for (const option of def.options) walk(option, path);
    else if (def.type === 'intersection') for (const side of [def.left, def.right]) walk(side, path);
    else if (def.type === 'object') {
      add(path);
      for (const [key, field] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        add([...path, key]);
        walk(field, [...path, key]);
      }
      add([...path, 'undeclared']);
    } else if (def.type === 'array') {
      add(path);
      add([...path, 0]);
      walk(def.element, [...path, 0]);
    } else if (def.type === 'record') {
      add(path);
      add([...path, 'k']);
      walk(def.valueType, [...path, 'k']);
    } else add(path);
  };
  walk(schema, []);
  return [...found.values()];
}

const PLACEHOLDER = '\u0000deep\u0000';

/** `base` with the value at `path` replaced by a placeholder (containers created as needed). */
function withPlaceholder(base: unknown, path: Path): unknown {
  if (path.length === 0) return PLACEHOLDER;
  const [head, ...rest] = path as [string | number, ...Path];
  if (typeof head === 'number') {
    const array = Array.isArray(base) ? [...base] : [];
    array[head] = withPlaceholder(array[head], rest);
    return array;
  }
  const object: Record<string, unknown> = typeof base === 'object' && base !== null && !Array.isArray(base) ? { ...base } : {};
  object[head] = withPlaceholder(object[head], rest);
  return object;
}

/** A body `total` levels deep: `base` with a deep value at `path` (the path's containers count). */
function bodyAt(base: unknown, path: Path, total: number, shape: NestingShape): string {
  return JSON.stringify(withPlaceholder(base, path)).replace(JSON.stringify(PLACEHOLDER), deepJson(total - path.length, shape));
}

let s: TestServer;
let upstream: FakeUpstream;
const ids: Record<string, string> = {};

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'k', AGENT_PLATFORM_TOOL_TIMEOUT_MS: '5000' } });
  const ok = async (method: string, path: string, body: unknown) => {
    const res = await s.call(method, path, { body });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body;
  };
  ids.project = (await ok('POST', '/api/projects/create', { name: 'deep', model: 'gpt-test', provider: 'openai' })).project.id;
  ids.chat = (await ok('POST', '/api/chats', { projectId: ids.project })).chat.id;
  const tool = { projectId: ids.project, name: 'one', language: 'javascript', code: 'function main() { return 1; }', parameters: { type: 'object' } };
  ids.tool = (await ok('POST', '/api/tools/create', tool)).tool.id;
  ids.credential = (await ok('POST', '/api/v1/credentials', { name: 'c', provider: 'openai', apiKey: 'sk-test' })).credential.id;
});
afterAll(async () => {
  await s?.stop();
  await upstream?.close();
});

/** The path of a route with the ids of user A's resources filled in. */
function concretePath(route: ApiRoute): string {
  const kind = route.path.startsWith('/api/tools') ? 'tool' : route.path.includes('credentials') ? 'credential' : 'project';
  return route.path.replace('{chatId}', ids.chat as string).replace('{id}', ids[kind] as string);
}

/** A valid body of each route with a JSON body, so a body at the limit reaches the route's own code. */
function validBody(route: ApiRoute): unknown {
  const projectId = ids.project;
  const document = { projectId, fileName: 'deep.txt', fileType: 'txt', sourceType: 'upload', content: 'deep values' };
  const completion = { model: projectId, messages: [{ role: 'user', content: 'hello' }] };
  const bodies: Record<string, unknown> = {
    'POST /api/auth/create-key': { name: 'another' },
    'POST /api/projects/create': { name: 'p', model: 'gpt-test', provider: 'openai' },
    'PATCH /api/v1/projects/{id}': { name: 'renamed' },
    'POST /api/v1/chat/completions': completion,
    'POST /api/v1/ai/chat/completions': { ...completion, chatId: ids.chat },
    'POST /api/chats': { projectId },
    'PATCH /api/chats/{chatId}': { name: 'renamed' },
    'POST /api/chats/{chatId}/streams': { chatId: ids.chat },
    'POST /api/tools/create': { projectId, name: 'two', language: 'javascript', code: 'function main(a) { return a; }', parameters: { type: 'object' } },
    'PUT /api/tools/{id}': { toolId: ids.tool, tool: { description: 'still one' } },
    'POST /api/tools/{id}/activate': { toolId: ids.tool, activeState: true },
    'POST /api/tools/{id}/run': { args: { a: 1 } },
    'POST /api/mcp/add-server': { projectId, name: 'm', transport: 'stdio', command: 'node' },
    'POST /api/mcp/detect-transport': { url: 'http://127.0.0.1:9/mcp' },
    'DELETE /api/v1/localmodel/delete-model': { modelName: 'none:latest', baseUrl: 'http://127.0.0.1:9' },
    'POST /api/v1/credentials': { name: 'c2', provider: 'openai', apiKey: 'sk-test' },
    'PATCH /api/v1/credentials/{id}': { data: { name: 'c3' } },
    'PATCH /api/credentials/{id}': { data: { name: 'c4' } },
    'POST /api/knowledge/documents': document,
    'POST /api/knowledge/documents/stream': document,
    'POST /api/knowledge/search': { projectId, query: 'deep' },
    'PUT /api/knowledge/settings': { projectId, settings: { topK: 5 } },
    'POST /api/knowledge/reindex': { projectId },
    // Paths of these take the project's id where an MCP server's or an approval's goes: a 404 past the parser.
    'PATCH /api/mcp/servers/{id}': { requiresApproval: true },
    'POST /api/v1/approvals/{id}': { decision: 'deny', reason: 'deep' },
    'POST /api/v1/responses': { model: projectId, input: 'hello' },
    'POST /api/v1/projects/{id}/mcp': { jsonrpc: '2.0', id: 1, method: 'ping', params: {} },
  };
  const body = bodies[`${route.method} ${route.path}`];
  // A new route with a body must be added above: the fuzz test covers every one.
  expect(body, `no valid body for ${route.method} ${route.path} in nesting.test.ts`).toBeDefined();
  return body;
}

/** The message of an error response in the route's shape (`error` on the local model routes). */
const messageOf = (route: ApiRoute, body: any): unknown => (route.kind === 'raw' ? body.error : body.message);

const jsonRoutes = apiRoutes.filter((r) => r.body && r.bodyKind !== 'multipart');

describe('nesting depth per route', () => {
  it('covers the routes that take a body', () => {
    expect(jsonRoutes.length).toBeGreaterThanOrEqual(20);
    expect(apiRoutes.filter((r) => r.bodyKind === 'multipart').map((r) => r.path)).toEqual(['/api/knowledge/upload']);
  });

  it.each(jsonRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s refuses bodies nested too deep, at every field', async (_name, route) => {
    const base = validBody(route);
    const paths = positions(route.body as z.ZodType);
    expect(paths.length).toBeGreaterThan(1);
    let n = 0;
    for (const path of paths) {
      for (const total of OVER) {
        // Both users, and every shape in turn.
        const key = n % 2 === 0 ? s.keyA : s.keyB;
        const shape = SHAPES[n++ % SHAPES.length] as NestingShape;
        const res = await s.call(route.method, concretePath(route), { key, raw: bodyAt(base, path, total, shape) });
        const where = `${JSON.stringify(path)} at ${total}`;
        expect(res.status, where).toBe(400);
        expect(res.body, where).toMatchObject({ success: false, code: 'invalid_request' });
        expect(messageOf(route, res.body), where).toBe(LIMIT_MESSAGE);
        if (route.kind === 'openai') expect(res.body.error, where).toMatchObject({ message: LIMIT_MESSAGE, type: 'invalid_request_error' });
      }
    }
  });

  it.each(jsonRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s takes bodies exactly at the limit past the parser', async (_name, route) => {
    const base = validBody(route);
    // Objects, then objects and arrays in turn: the fields that take objects take them, so the
    // deep value reaches the route's own code (storage, sandbox, model).
    for (const [path, shape] of positions(route.body as z.ZodType).flatMap(
      (p) =>
        [
          [p, 'objects'],
          [p, 'mixed'],
        ] as const,
    )) {
      const res = await s.call(route.method, concretePath(route), { raw: bodyAt(base, path, MAX_NESTING_DEPTH, shape) });
      const where = `${JSON.stringify(path)}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      expect(res.status, where).not.toBe(500);
      expect(typeof res.body === 'object' ? res.body.code : undefined, where).not.toBe('internal');
      expect(JSON.stringify(res.body), where).not.toContain('nested deeper');
    }
  });

  it('the upload form cannot nest: deep JSON in its fields is text, never parsed', async () => {
    const form = new FormData();
    form.set('projectId', deepJson(100_000, 'mixed'));
    form.append('files', new Blob(['plain text']), 'a.txt');
    for (const key of [s.keyA, s.keyB]) {
      const res = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ success: false, code: 'invalid_request', message: expect.stringMatching(/^projectId: /) });
    }
    // A JSON body sent there is refused as not a form, before anything reads it as JSON.
    const json = await s.call('POST', '/api/knowledge/upload', { raw: deepJson(100_000, 'arrays') });
    expect(json.status).toBe(400);
  });

  it('queries are flat: bracketed names and deep JSON values never reach recursion', async () => {
    const app = createApp(s.platform);
    const deepName = `x${'[a]'.repeat(100_000)}`;
    const deepText = encodeURIComponent(deepJson(100_000, 'mixed'));
    for (const route of apiRoutes.filter((r) => r.query)) {
      for (const field of [...Object.keys(route.query?.shape ?? {}), deepName]) {
        const search = `?${field}=${deepText}&${field}[0][1][2]=${deepText}&${field}=2`;
        const url = new URL(concretePath(route) + search, 'http://in-process');
        // An object of strings and arrays of strings: two levels at most.
        expect(exceedsNesting(queryObject(url), 2)).toBe(false);
        for (const key of [s.keyA, s.keyB]) {
          const res = await app.request(url.pathname + url.search, { method: route.method, headers: { authorization: `Bearer ${key}` } });
          // 400 for a bad or repeated parameter; the local model route may then find no runtime (503).
          expect(res.status, `${route.path} ${field.slice(0, 20)}`).not.toBe(500);
          expect(((await res.json()) as { code?: string }).code).not.toBe('internal');
        }
      }
    }
  });

  it('/health still answers afterwards', async () => {
    // On a new connection: what is checked is that the process still serves, not whether the
    // client's pool kept a connection that a refused request left behind (fetch then fails with
    // ECONNRESET when the server has just closed it).
    const { status, body } = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      get(`${s.url}/health`, { agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      }).on('error', reject);
    });
    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({ status: 'ok' });
  });
});

describe('the fuzz helpers', () => {
  it('put the deep value where the path says, counting the path in the depth', () => {
    expect(JSON.parse(bodyAt({ a: 1, b: { c: 2 } }, ['b', 'c'], 4, 'arrays'))).toEqual({ a: 1, b: { c: [[]] } });
    expect(JSON.parse(bodyAt({ m: [{ r: 1 }] }, ['m', 0, 'x'], 4, 'objects'))).toEqual({ m: [{ r: 1, x: {} }] });
    const settings = apiRoutes.find((r) => r.path === '/api/knowledge/settings')?.body as z.ZodType;
    expect(positions(settings)).toEqual(expect.arrayContaining([[], ['settings'], ['settings', 'vectorStoreConfig', 'k'], ['undeclared']]));
  });
});
