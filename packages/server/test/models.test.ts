import OpenAI from 'openai';
import { CursorPage } from 'openai/pagination';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// GET /api/v1/models and /api/v1/models/{id} through the official openai client, against a
// real server: the caller's projects are the models, other users' are not found.
let s: TestServer;
let client: OpenAI;
const ids: string[] = [];

beforeAll(async () => {
  s = await startTestServer();
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  for (const name of ['Support', 'Sales']) {
    ids.push((await s.call('POST', '/api/projects/create', { body: { name, model: 'gpt-test', provider: 'openai' } })).body.project.id);
  }
  await s.call('POST', '/api/projects/create', { key: s.keyB, body: { name: 'Not yours', model: 'gpt-test', provider: 'openai' } });
});
afterAll(async () => {
  await s.stop();
});

describe('models (OpenAI-compatible)', () => {
  it("models.list() gives the caller's projects, newest first, as model objects", async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models.map((m) => m.id)).toEqual([...ids].reverse());
    expect(models[0]).toEqual({ id: ids[1], object: 'model', created: expect.any(Number), owned_by: 'agent-platform', name: 'Sales' });
    expect(Math.abs((models[0]?.created ?? 0) - Date.now() / 1000)).toBeLessThan(600);
  });

  it("models.retrieve() gives one; an unknown or another user's id is a 404 in OpenAI's shape", async () => {
    expect(await client.models.retrieve(ids[0] as string)).toMatchObject({ id: ids[0], object: 'model', name: 'Support' });
    const other = (await s.call('GET', '/api/v1/models', { key: s.keyB })).body.data[0].id;
    for (const id of ['proj_nothere', other]) {
      const error = await client.models.retrieve(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'not_found_error', code: 'not_found', message: expect.stringContaining(id) });
    }
  });

  it("pages the list as OpenAI's cursor lists do (limit, after; has_more, first_id, last_id); models.list() gets the first page", async () => {
    const { key, userId } = await s.platform.createUserWithKey({ name: 'many' });
    for (let n = 0; n < 130; n++) await s.platform.createProject({ userId }, { name: `agent ${n}`, model: 'm', provider: 'openai' });
    // Without paging members, as front ends ask: one page of the default size (1000) holds them.
    const whole = (await s.call('GET', '/api/v1/models', { key })).body;
    expect(whole.data).toHaveLength(130);
    expect(whole).toMatchObject({ object: 'list', has_more: false, first_id: whole.data[0].id, last_id: whole.data[129].id });
    expect(whole.data[0].name).toBe('agent 129');
    const own = new OpenAI({ apiKey: key, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
    const listed = [];
    for await (const model of own.models.list()) listed.push(model.id);
    expect(listed).toEqual(whole.data.map((m: { id: string }) => m.id));
    // Page by page, each page starting after the last id of the one before.
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await s.call('GET', `/api/v1/models?limit=50${after ? `&after=${after}` : ''}`, { key })).body;
      pages.push(page.data.map((m: { id: string }) => m.id));
      expect(page.last_id).toBe(page.data.at(-1).id);
      if (!page.has_more) break;
      after = page.last_id;
    }
    expect(pages.map((p) => p.length)).toEqual([50, 50, 30]);
    expect(pages.flat()).toEqual(listed);
    // An OpenAI cursor-paged client follows the same members by itself (its CursorPage: has_more, after = last id).
    const followed: string[] = [];
    for await (const model of own.getAPIList('/models', CursorPage<OpenAI.Models.Model>, { query: { limit: 40 } })) followed.push((model as OpenAI.Models.Model).id);
    expect(followed).toEqual(listed);
  });

  it("refuses a page size out of range and an after that is not one of the caller's models, in OpenAI's error shape", async () => {
    const other = (await s.call('GET', '/api/v1/models', { key: s.keyB })).body.data[0].id;
    for (const query of ['limit=0', 'limit=1001', `after=${other}`, 'after=proj_nothere']) {
      const res = await s.call('GET', `/api/v1/models?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/^(limit|after):/) });
    }
    const empty = (await s.call('GET', `/api/v1/models?after=${ids[0]}`)).body;
    expect(empty).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });
});
