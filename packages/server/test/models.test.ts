import OpenAI from 'openai';
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

  it('models.retrieve() gives one; an unknown or another user\'s id is a 404 in OpenAI\'s shape', async () => {
    expect(await client.models.retrieve(ids[0] as string)).toMatchObject({ id: ids[0], object: 'model', name: 'Support' });
    const other = (await s.call('GET', '/api/v1/models', { key: s.keyB })).body.data[0].id;
    for (const id of ['proj_nothere', other]) {
      const error = await client.models.retrieve(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'not_found_error', code: 'not_found', message: expect.stringContaining(id) });
    }
  });

  it('lists every project, past one storage page (OpenAI lists have no paging)', async () => {
    const { key, userId } = await s.platform.createUserWithKey({ name: 'many' });
    for (let n = 0; n < 130; n++) await s.platform.createProject({ userId }, { name: `agent ${n}`, model: 'm', provider: 'openai' });
    const listed = (await s.call('GET', '/api/v1/models', { key })).body.data as { id: string; name: string }[];
    expect(listed).toHaveLength(130);
    expect(new Set(listed.map((m) => m.id)).size).toBe(130);
    expect(listed[0]?.name).toBe('agent 129');
  });
});
