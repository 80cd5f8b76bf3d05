import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

let upstream: FakeUpstream;
let s: TestServer;
let projectA: string;
let projectB: string;

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' } });
  projectA = (await s.call('POST', '/api/projects/create', { body: { name: 'A', model: 'gpt-test', provider: 'openai' } })).body.project.id;
  projectB = (await s.call('POST', '/api/projects/create', { key: s.keyB, body: { name: 'B', model: 'gpt-test', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

describe("a model of the project-id form that is not one of the caller's projects", () => {
  const ask = (model: string, baseURL = `${s.url}/api/v1`) => new OpenAI({ apiKey: s.keyA, baseURL, maxRetries: 0 }).chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] });

  it("answers 404 not_found for another user's project id, in OpenAI's error shape, and sends nothing upstream", async () => {
    const error = await ask(projectB).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, error: { type: 'not_found_error', code: 'not_found', message: expect.stringContaining(`Project ${projectB} not found`) } });
    expect((error as Error).message).toContain('none of your projects has it');
    expect(upstream.requests).toEqual([]);
  });

  it('answers 404 for an unknown proj_ id, on both completion routes', async () => {
    await expect(ask('proj_doesnotexist123')).rejects.toMatchObject({ status: 404, error: { code: 'not_found' } });
    const res = await s.call('POST', '/api/v1/ai/chat/completions', { body: { model: 'proj_doesnotexist123', chatId: 'chat-x', messages: [{ role: 'user', content: 'x' }] } });
    expect(res).toMatchObject({ status: 404, body: { success: false, code: 'not_found', error: { type: 'not_found_error' } } });
    expect(upstream.requests).toEqual([]);
  });

  it("the caller's own project is the agent, and a plain model name still goes upstream", async () => {
    expect((await ask(projectA)).model).toBe(projectA);
    expect(upstream.requests[0]).toMatchObject({ model: 'gpt-test' });
    expect((await ask('gpt-plain')).model).toBe('gpt-plain');
    expect(upstream.requests[1]).toMatchObject({ model: 'gpt-plain' });
  });
});
