import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform } from '@agent-platform/core';
import { MAX_DOCUMENT_CONTENT } from '@agent-platform/core/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from '../../core/test/ollama-server.js';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { createApp } from '../src/app.js';
import type { ApiRoute } from '../src/route.js';
import { apiRoutes } from '../src/routes.js';
import { eventsSince, expectOneEvent, MUTATING, markAudit } from './audit-rows.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

/**
 * The route suite: walks the route table. For every route a valid call succeeds (and its answer
 * matches the route's response schema), bad input gets 400 naming the field, an unknown id and
 * another user's id get 404, no key gets 401, a 10 MB body gets 413 naming the limit, and every
 * status seen is one /openapi.json documents for the route. A route without an entry in VALID
 * fails the suite: a new route must be added here.
 */

const UPLOAD_LIMIT = 8 * 1024 * 1024;
/** The images a completion may carry (`--max-request-image-bytes`), base64 in its body beside the JSON limit. */
const REQUEST_IMAGES = 3 * 1024 * 1024;
const COMPLETION_LIMIT = 1024 * 1024 + (REQUEST_IMAGES / 3) * 4;
const TEN_MB = 10 * 1024 * 1024;

let s: TestServer;
let upstream: FakeUpstream;
let ollama: OllamaTestServer;
let everything: ServerProcess;
/** User A and the key the suite calls with: who every audit event of a valid call names. */
let who: { userId: string; keyId: string };
let openapi: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

beforeAll(async () => {
  [upstream, ollama, everything] = await Promise.all([startUpstream(), startOllamaServer(), startEverything('streamableHttp')]);
  s = await startTestServer({
    outbound: ALLOW_LOOPBACK,
    uploadLimit: UPLOAD_LIMIT,
    images: { maxRequestBytes: REQUEST_IMAGES },
    env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'k', OLLAMA_HOST: ollama.url },
  });
  openapi = (await s.call('GET', '/openapi.json', { key: null })).body;
  const caller = await s.platform.authenticate(s.keyA);
  who = { userId: caller?.userId as string, keyId: caller?.keyId as string };
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await Promise.all([upstream?.close(), ollama?.close(), everything?.stop()]);
});

/** One request to a route: its path ids, query and body (or multipart form). */
interface Call {
  readonly params?: Record<string, string>;
  readonly query?: Record<string, string>;
  readonly body?: unknown;
  readonly form?: { readonly fields: Record<string, string>; readonly files: { name: string; text: string }[] };
  /** Headers a protocol asks for (the MCP transport's `Accept`). */
  readonly headers?: Record<string, string>;
}

/** Creates a resource as the user of `key`, failing the test unless it worked. */
async function create(key: string, method: string, path: string, body: unknown): Promise<any> {
  const res = await s.call(method, path, { key, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** Fresh resources of one user (each call makes new ones, so deleting routes can consume them). */
const make = {
  project: async (key: string) => (await create(key, 'POST', '/api/projects/create', { name: 'p', model: 'gpt-test', provider: 'openai' })).project.id as string,
  chat: async (key: string) => (await create(key, 'POST', '/api/chats', { projectId: await make.project(key) })).chat.id as string,
  tool: async (key: string) =>
    (await create(key, 'POST', '/api/tools/create', { projectId: await make.project(key), name: 'echo', language: 'javascript', code: 'function main(args) { return args; }' })).tool.id as string,
  credential: async (key: string) => (await create(key, 'POST', '/api/v1/credentials', { name: 'c', provider: 'openai', apiKey: 'sk-test' })).credential.id as string,
  document: async (key: string) => (await create(key, 'POST', '/api/knowledge/documents', { ...doc(await make.project(key)) })).documentId as string,
  chunk: async (key: string) => {
    const projectId = await make.project(key);
    await create(key, 'POST', '/api/knowledge/documents', doc(projectId));
    return (await create(key, 'POST', '/api/knowledge/search', { projectId, query: 'pump' })).documents[0].id as string;
  },
  mcpServer: async (key: string) =>
    (await create(key, 'POST', '/api/mcp/add-server', { projectId: await make.project(key), name: 'everything', transport: 'http', url: mcpUrl() })).server.id as string,
  /** A tool call waiting for approval, with another of its pause (so deciding it answers the decision, no model call). */
  approval: async (key: string) => {
    const chatId = await make.chat(key);
    const userId = (await s.platform.authenticate(key))?.userId as string;
    const projectId = (await s.platform.storage.chats.get(userId, chatId))?.projectId;
    const now = new Date();
    const row = (id: string) => ({
      id,
      userId,
      projectId: projectId as string,
      chatId,
      kind: 'tool' as const,
      groupId: `grp_${chatId}`,
      callId: `call_${id}`,
      tool: 'echo',
      arguments: '{}',
      message: null,
      schema: null,
      resume: {},
      state: 'pending' as const,
      reason: null,
      content: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 60_000),
      decidedAt: null,
    });
    await s.platform.storage.approvals.insert([row(`apv_${chatId}_1`), row(`apv_${chatId}_2`)]);
    return `apv_${chatId}_1`;
  },
  response: async (key: string) => (await create(key, 'POST', '/api/v1/responses', { model: await make.project(key), input: 'hello' })).id as string,
  /** A background response left running (its model call hangs until the response is cancelled). */
  running: async (key: string) => {
    upstream.script({ hang: true });
    return (await create(key, 'POST', '/api/v1/responses', { model: await make.project(key), input: 'hello', background: true })).id as string;
  },
  stream: async (key: string) => {
    const chatId = await make.chat(key);
    const streamId = (await create(key, 'POST', `/api/chats/${chatId}/streams`, { chatId })).stream.id as string;
    return { chatId, streamId };
  },
};
const doc = (projectId: string) => ({ projectId, fileName: 'notes.md', fileType: 'md', sourceType: 'upload', content: '# Pumps\n\nThe pump needs oil.' });
const mcpUrl = () => `http://127.0.0.1:${everything.port}/mcp`;
/** A real 1x1 PNG, base64. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const completion = (model: string) => ({ model, messages: [{ role: 'user', content: 'hello' }] });

/** A valid call of every route, made as the user of `key`. */
const VALID: Record<string, (key: string) => Promise<Call>> = {
  'POST /api/auth/create-key': async () => ({ body: { name: 'second' } }),
  'GET /api/auth/keys': async () => ({}),
  'DELETE /api/auth/keys/{id}': async (key) => ({ params: { id: (await create(key, 'POST', '/api/auth/create-key', { name: 'doomed' })).id } }),
  'POST /api/projects/create': async () => ({ body: { name: 'p', model: 'gpt-test', provider: 'openai' } }),
  'GET /api/v1/projects': async () => ({ query: { limit: '5' } }),
  'GET /api/v1/projects/{id}': async (key) => ({ params: { id: await make.project(key) } }),
  'PATCH /api/v1/projects/{id}': async (key) => ({ params: { id: await make.project(key) }, body: { name: 'renamed' } }),
  'DELETE /api/v1/projects/{id}': async (key) => ({ params: { id: await make.project(key) } }),
  'POST /api/v1/chat/completions': async (key) => ({ body: completion(await make.project(key)) }),
  'POST /api/v1/ai/chat/completions': async (key) => ({ body: { ...completion(await make.project(key)), chatId: await make.chat(key) } }),
  'GET /api/v1/approvals': async () => ({ query: { state: 'pending', limit: '5' } }),
  'GET /api/v1/approvals/{id}': async (key) => ({ params: { id: await make.approval(key) } }),
  'POST /api/v1/approvals/{id}': async (key) => ({ params: { id: await make.approval(key) }, body: { decision: 'deny', reason: 'not now' } }),
  'PATCH /api/mcp/servers/{id}': async (key) => ({ params: { id: await make.mcpServer(key) }, body: { requiresApproval: ['echo'] } }),
  'GET /api/v1/models': async () => ({}),
  'POST /api/v1/responses': async (key) => ({ body: { model: await make.project(key), input: 'hello' } }),
  'GET /api/v1/responses/{id}': async (key) => ({ params: { id: await make.response(key) } }),
  'DELETE /api/v1/responses/{id}': async (key) => ({ params: { id: await make.response(key) } }),
  'POST /api/v1/responses/{id}/cancel': async (key) => ({ params: { id: await make.running(key) } }),
  'GET /api/v1/responses/{id}/input_items': async (key) => ({ params: { id: await make.response(key) }, query: { limit: '5' } }),
  'GET /api/v1/models/{id}': async (key) => ({ params: { id: await make.project(key) } }),
  'POST /api/chats': async (key) => ({ body: { projectId: await make.project(key), name: 'Support' } }),
  'GET /api/chats': async () => ({ query: { limit: '5', offset: '0' } }),
  'GET /api/chats/{chatId}/messages': async (key) => ({ params: { chatId: await make.chat(key) } }),
  'GET /api/chats/{chatId}/images/{ref}': async (key) => {
    const chatId = await make.chat(key);
    const projectId = (await s.call('GET', `/api/chats`, { key })).body.chats.find((c: { id: string }) => c.id === chatId).projectId;
    const content = [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1X1}` } }];
    await create(key, 'POST', '/api/v1/chat/completions', { model: projectId, messages: [{ role: 'user', content }], chatId });
    const { messages } = await create(key, 'GET', `/api/chats/${chatId}/messages`, undefined);
    return { params: { chatId, ref: messages[0].parts[0].ref } };
  },
  'PATCH /api/chats/{chatId}': async (key) => ({ params: { chatId: await make.chat(key) }, body: { name: 'Renamed' } }),
  'DELETE /api/chats/{chatId}': async (key) => ({ params: { chatId: await make.chat(key) } }),
  'POST /api/chats/{chatId}/streams': async (key) => {
    const chatId = await make.chat(key);
    return { params: { chatId }, body: { chatId } };
  },
  'GET /api/chats/{chatId}/streams/{streamId}': async (key) => {
    const { chatId, streamId } = await make.stream(key);
    // A completion writes the stream and ends it, so the replay ends too.
    const projectId = (await s.call('GET', `/api/chats`, { key })).body.chats.find((c: { id: string }) => c.id === chatId).projectId;
    await create(key, 'POST', '/api/v1/chat/completions', { ...completion(projectId), chatId, streamId });
    return { params: { chatId, streamId } };
  },
  'POST /api/tools/create': async (key) => ({
    body: { projectId: await make.project(key), name: 'add', language: 'javascript', code: 'function main({ a, b }) { return a + b; }', parameters: { type: 'object' } },
  }),
  'GET /api/tools': async (key) => ({ query: { projectId: await make.project(key) } }),
  'GET /api/tools/{id}': async (key) => ({ params: { id: await make.tool(key) } }),
  'PUT /api/tools/{id}': async (key) => {
    const id = await make.tool(key);
    return { params: { id }, body: { toolId: id, tool: { description: 'echoes' } } };
  },
  'POST /api/tools/{id}/activate': async (key) => {
    const id = await make.tool(key);
    return { params: { id }, body: { toolId: id, activeState: false } };
  },
  'DELETE /api/tools/{id}': async (key) => ({ params: { id: await make.tool(key) } }),
  'POST /api/tools/{id}/run': async (key) => ({ params: { id: await make.tool(key) }, body: { args: { a: 1 } } }),
  'POST /api/mcp/add-server': async (key) => ({ body: { projectId: await make.project(key), name: 'everything', transport: 'http', url: mcpUrl() } }),
  'GET /api/mcp/servers': async (key) => ({ query: { projectId: await make.project(key) } }),
  'GET /api/mcp/servers/{id}': async (key) => ({ params: { id: await make.mcpServer(key) } }),
  'GET /api/mcp/servers/{id}/tools': async (key) => ({ params: { id: await make.mcpServer(key) } }),
  'DELETE /api/mcp/servers/{id}': async (key) => ({ params: { id: await make.mcpServer(key) } }),
  'POST /api/mcp/detect-transport': async () => ({ body: { url: mcpUrl() } }),
  'POST /api/v1/projects/{id}/mcp': async (key) => ({
    params: { id: await make.project(key) },
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'ping' },
  }),
  'GET /api/v1/localmodel/list-models': async () => ({ query: { baseUrl: ollama.url } }),
  'DELETE /api/v1/localmodel/delete-model': async () => {
    ollama.models = [ollamaTag('tiny:latest', 1000)];
    return { body: { modelName: 'tiny:latest' } };
  },
  'POST /api/v1/credentials': async () => ({ body: { name: 'openai', provider: 'openai', apiKey: 'sk-test-1234' } }),
  'GET /api/v1/credentials': async () => ({}),
  'GET /api/v1/credentials/{id}': async (key) => ({ params: { id: await make.credential(key) } }),
  'PATCH /api/v1/credentials/{id}': async (key) => ({ params: { id: await make.credential(key) }, body: { data: { name: 'renamed' } } }),
  'PATCH /api/credentials/{id}': async (key) => ({ params: { id: await make.credential(key) }, body: { data: { name: 'renamed' } } }),
  'DELETE /api/v1/credentials/{id}': async (key) => ({ params: { id: await make.credential(key) } }),
  'POST /api/v1/credentials/{id}/test': async (key) => ({ params: { id: await make.credential(key) } }),
  'GET /api/v1/credentials/{id}/models': async (key) => ({ params: { id: await make.credential(key) } }),
  'GET /api/v1/credentials/default/models': async () => ({ query: { provider: 'openai' } }),
  'POST /api/knowledge/documents': async (key) => ({ body: doc(await make.project(key)) }),
  'POST /api/knowledge/documents/stream': async (key) => ({ body: doc(await make.project(key)) }),
  'GET /api/knowledge/documents': async (key) => ({ query: { projectId: await make.project(key) } }),
  'GET /api/knowledge/documents/{id}': async (key) => ({ params: { id: await make.document(key) } }),
  'GET /api/knowledge/documents/{id}/events': async (key) => ({ params: { id: await make.document(key) } }),
  'GET /api/knowledge/documents/{id}/chunks': async (key) => ({ params: { id: await make.document(key) }, query: { limit: '5' } }),
  'GET /api/knowledge/chunks/{id}': async (key) => ({ params: { id: await make.chunk(key) } }),
  'DELETE /api/knowledge/documents/{id}': async (key) => ({ params: { id: await make.document(key) } }),
  'POST /api/knowledge/upload': async (key) => ({ form: { fields: { projectId: await make.project(key) }, files: [{ name: 'a.txt', text: 'plain text' }] } }),
  'POST /api/knowledge/search': async (key) => ({ body: { projectId: await make.project(key), query: 'pump' } }),
  'PUT /api/knowledge/settings': async (key) => ({ body: { projectId: await make.project(key), settings: { topK: 3 } } }),
  'GET /api/knowledge/settings': async (key) => ({ query: { projectId: await make.project(key) } }),
  'POST /api/knowledge/reindex': async (key) => {
    const id = await make.document(key);
    const { document } = await create(key, 'GET', `/api/knowledge/documents/${id}`, undefined);
    return { body: { projectId: document.projectId, documentIds: [id] } };
  },
  'GET /api/v1/audit': async () => ({ query: { limit: '5', resource: 'project' } }),
};

const name = (route: ApiRoute) => `${route.method} ${route.path}`;
const valid = (route: ApiRoute) => VALID[name(route)] as (key: string) => Promise<Call>;

/** Sends a call to a route; `key: null` sends none. */
async function send(route: ApiRoute, call: Call, key: string | null, rawBody?: string) {
  let path = route.path.replace(/\{(\w+)\}/g, (_, param: string) => encodeURIComponent(call.params?.[param] ?? ''));
  if (call.query) path += `?${new URLSearchParams(call.query)}`;
  if (!call.form) return s.call(route.method, path, { key, headers: call.headers ?? {}, ...(rawBody !== undefined ? { raw: rawBody } : { body: call.body }) });
  const form = new FormData();
  for (const [field, value] of Object.entries(call.form.fields)) form.set(field, value);
  for (const file of call.form.files) form.append('files', new Blob([file.text]), file.name);
  const res = await fetch(s.url + path, { method: route.method, headers: key ? { authorization: `Bearer ${key}` } : {}, body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) };
}

/** The failure message in the route's shape (`error` on the local model routes). */
const messageOf = (route: ApiRoute, body: any): string => (route.kind === 'raw' ? body.error : body.message);

/**
 * A failure body has only the members of every failure (`success`, `code`, the message, and
 * `details` for extra facts), those the route's `failure` puts at the top level where the spec
 * shows them, and OpenAI's `error` object on the OpenAI-compatible and responses routes.
 */
function expectErrorMembers(route: ApiRoute, body: Record<string, unknown>) {
  const allowed = new Set([
    'success',
    'code',
    'details',
    route.kind === 'raw' ? 'error' : 'message',
    ...(route.kind === 'openai' || route.kind === 'responses' ? ['error'] : []),
    ...Object.keys(route.failure ?? {}),
  ]);
  expect(
    Object.keys(body).filter((member) => !allowed.has(member)),
    `${name(route)}: members outside details`,
  ).toEqual([]);
  if ('details' in body) expect(typeof body.details).toBe('object');
}

/** The status is one the document lists for this route. */
function expectDocumented(route: ApiRoute, status: number) {
  const responses = openapi.paths[route.path]?.[route.method.toLowerCase()]?.responses ?? {};
  expect(Object.keys(responses), `${name(route)} answered ${status}, which /openapi.json does not list`).toContain(String(status));
}

/** The object schema of a body: the body's own, or the variant of a discriminated union that `body` is (a credential's provider). */
function objectOf(schema: z.ZodType, body: unknown): z.ZodObject | undefined {
  if ('shape' in schema) return schema as z.ZodObject;
  if (!(schema instanceof z.ZodDiscriminatedUnion)) return undefined;
  const key = schema.def.discriminator;
  const value = (body as Record<string, unknown>)[key];
  return (schema.options as z.ZodObject[]).find((option) => (option.shape[key] as z.ZodLiteral).values.has(value as never));
}

/** A value of each field that its schema refuses: the field, and the input with it. */
function breakField(schema: z.ZodObject, input: Record<string, unknown>, candidates: readonly unknown[]): { field: string; input: Record<string, unknown> } | undefined {
  for (const field of Object.keys(schema.shape)) {
    for (const value of candidates) {
      const broken = { ...input, [field]: value };
      if (!schema.safeParse(broken).success) return { field, input: broken };
    }
  }
  return undefined;
}

describe('route table', () => {
  it('has a valid call for every route, and none for a route that does not exist', () => {
    const routes = apiRoutes.map(name);
    expect(
      routes.filter((r) => !VALID[r]),
      'routes without a valid call in routes.test.ts',
    ).toEqual([]);
    expect(
      Object.keys(VALID).filter((r) => !routes.includes(r)),
      'entries for no route',
    ).toEqual([]);
  });

  it('has every route that changes something say its audit event, or why it records none; GET routes say nothing', () => {
    const undeclared = apiRoutes.filter((r) => MUTATING.has(r.method) && !(r.audit && ('none' in r.audit ? r.audit.none.length > 10 : r.audit.resource && r.audit.action)));
    expect(undeclared.map(name), 'POST, PUT, PATCH and DELETE routes without audit').toEqual([]);
    expect(apiRoutes.filter((r) => r.method === 'GET' && r.audit).map(name), 'GET routes with audit').toEqual([]);
  });
});

describe.each(apiRoutes.map((route) => [name(route), route] as const))('%s', (_name, route) => {
  it('succeeds with a valid call, answering its response schema, and records its audit event (none for reads)', async () => {
    const call = await valid(route)(s.keyA);
    const mark = await markAudit(s.platform);
    const res = await send(route, call, s.keyA);
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(route.status ?? 200);
    expectDocumented(route, res.status);
    const events = await eventsSince(s.platform, mark);
    if (route.audit && 'resource' in route.audit) expectOneEvent(route, call, res.body, events, who);
    else expect(events, `${name(route)} records no audit event`).toEqual([]);
    // The data of each event (replayed events carry an `id:` line first); comments are not events.
    const eventData = () =>
      String(res.body)
        .split('\n\n')
        .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]'))
        .map((line) => JSON.parse(line.slice(6)));
    if (route.kind === 'sse' || route.kind === 'replay') {
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const data = eventData();
      expect(data.length).toBeGreaterThan(0);
      if (route.kind === 'sse') for (const event of data) expect(route.response.safeParse(event).error).toBeUndefined();
    } else if (route.kind === 'binary') {
      expect(route.media.types).toContain(res.headers.get('content-type'));
      expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
    } else if (route.kind === 'web' && res.headers.get('content-type')?.includes('text/event-stream')) {
      // A protocol's event stream (MCP's): each message of the response schema.
      const data = eventData();
      expect(data.length).toBeGreaterThan(0);
      for (const message of data) expect(route.response.safeParse(message).error).toBeUndefined();
    } else {
      expect(route.response.safeParse(res.body).error).toBeUndefined();
    }
  });

  it('answers 401 without a key', async () => {
    const res = await send(route, await valid(route)(s.keyA), null);
    expect(res.status).toBe(401);
    expect(messageOf(route, res.body)).toBe('Unauthorized');
    expectErrorMembers(route, res.body);
    expectDocumented(route, 401);
  });

  it.runIf(route.params)("answers 404 for an unknown id and for another user's id", async () => {
    const call = await valid(route)(s.keyA);
    const other = await send(route, call, s.keyB);
    expect(other.status, JSON.stringify(other.body)).toBe(404);
    // The same call with every path id unknown (where the body repeats an id, it follows).
    let text = JSON.stringify(call);
    for (const [param, value] of Object.entries(call.params ?? {})) text = text.replaceAll(value, `${param}_unknown0000`);
    const unknown = await send(route, JSON.parse(text) as Call, s.keyA);
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, code: 'not_found' });
    expectErrorMembers(route, unknown.body);
    expectErrorMembers(route, other.body);
    expectDocumented(route, 404);
  });

  it.runIf(route.params || route.query || route.body)('answers 400 naming the field for a bad param, query or body', async () => {
    const call = await valid(route)(s.keyA);
    const bad: { field: string; call: Call }[] = [];
    for (const param of Object.keys(call.params ?? {})) bad.push({ field: param, call: { ...call, params: { ...call.params, [param]: 'x'.repeat(201) } } });
    if (route.query) {
      const broken = breakField(route.query, call.query ?? {}, ['abc', 'x'.repeat(5000), '-1']);
      if (broken) bad.push({ field: broken.field, call: { ...call, query: broken.input as Record<string, string> } });
    }
    if (call.form) bad.push({ field: 'projectId', call: { form: { ...call.form, fields: { projectId: 'x'.repeat(201) } } } });
    else if (route.body && objectOf(route.body, call.body)) {
      const broken = breakField(objectOf(route.body, call.body) as z.ZodObject, call.body as Record<string, unknown>, [12345, 'x', {}, [1]]);
      if (broken) bad.push({ field: broken.field, call: { ...call, body: broken.input } });
    }
    expect(bad.length).toBeGreaterThan(0);
    for (const { field, call: badCall } of bad) {
      const res = await send(route, badCall, s.keyA);
      expect(res.status, `${field}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: 'invalid_request' });
      expect(messageOf(route, res.body)).toMatch(new RegExp(`^${field}: |; ${field}: `));
      expectErrorMembers(route, res.body);
    }
    expectDocumented(route, 400);
  });

  it.runIf(route.body)('answers 413 naming the limit for a 10 MB body', async () => {
    const call = await valid(route)(s.keyA);
    const res = call.form
      ? await send(route, { form: { ...call.form, files: [{ name: 'big.txt', text: 'x'.repeat(TEN_MB) }] } }, s.keyA)
      : await send(route, call, s.keyA, JSON.stringify({ ...(call.body as object), padding: 'x'.repeat(TEN_MB) }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ success: false, code: 'payload_too_large' });
    expect(messageOf(route, res.body)).toContain(String(route.bodyLimit === 'upload' ? UPLOAD_LIMIT : route.bodyLimit === 'completion' ? COMPLETION_LIMIT : 1024 * 1024));
    expectErrorMembers(route, res.body);
    expectDocumented(route, 413);
  });
});

describe('query parameters', () => {
  it('an empty parameter is absent: ?baseUrl= lists the models of the default runtime', async () => {
    ollama.models = [ollamaTag('tiny:latest', 1000)];
    const res = await s.call('GET', '/api/v1/localmodel/list-models?baseUrl=');
    expect(res.status).toBe(200);
    expect(res.body.models.map((m: { name: string }) => m.name)).toEqual(['tiny:latest']);
  });
});

describe('size limits of fields', () => {
  // Under the byte limit of the route, over the size limit of a field: 413 all the same, naming
  // the field and its limit (a 10 MB document used to answer 400 "content: Too big").
  const post = async (path: string, body: unknown, options: { bodyLimit?: number } = {}) => {
    const platform = new AgentPlatform({ storage: memoryStorage() });
    const { key } = await platform.createUserWithKey({ name: 'big' });
    const res = await createApp(platform, options).request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it.each(['/api/knowledge/documents', '/api/knowledge/documents/stream'])('a 10 MB document to %s (default 16 MiB upload limit) is 413 naming content', async (path) => {
    const res = await post(path, { ...doc('proj_x'), content: 'x'.repeat(TEN_MB) });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ success: false, code: 'payload_too_large', message: `content: larger than the limit of ${MAX_DOCUMENT_CONTENT} characters` });
  });

  it('message text and tool code past their limits are 413 too, when the byte limit is raised', async () => {
    const long = await post('/api/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(1_000_001) }] }, { bodyLimit: 4 * 1024 * 1024 });
    expect(long.status).toBe(413);
    expect(long.body).toMatchObject({ code: 'payload_too_large', message: 'messages.0.content: larger than the limit of 1000000 characters' });
    expect(long.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payload_too_large' });
    const code = await post('/api/tools/create', { projectId: 'proj_x', name: 't', language: 'javascript', code: 'x'.repeat(200_001) }, { bodyLimit: 4 * 1024 * 1024 });
    expect(code).toMatchObject({ status: 413, body: { code: 'payload_too_large', message: 'code: larger than the limit of 200000 characters' } });
  });
});
