import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { addToolSource } from './add-tool.js';
import { startTestServer, type TestServer } from './helpers.js';

// response_format through both completion routes, with the official openai client against the
// built server and the loopback OpenAI fake as the model (also as Ollama, which has no
// structured outputs: the format goes in the prompt). docs/AGENT.md, "Structured outputs".

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;
let ollamaProject: string;
const { source: agentTools } = addToolSource();

const person = {
  type: 'json_schema' as const,
  json_schema: {
    name: 'person',
    description: 'A person',
    strict: true,
    schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false },
  },
};
const ask = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Who wrote Hamlet?' }], ...extra });
const sent = (i = -1) => fake.requests.at(i)?.body as Record<string, any>;

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', OLLAMA_HOST: fake.origin }, toolSources: [agentTools] });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Library', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  ollamaProject = (await s.call('POST', '/api/projects/create', { body: { name: 'Local', model: 'llama3.2', provider: 'ollama' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await fake.close();
});
beforeEach(() => fake.reset());

describe('a json_schema answer', () => {
  it('is asked natively of a plain model and answered when it follows the schema', async () => {
    fake.script({ text: '{"name":"William Shakespeare","age":52}' });
    const answer = await client.chat.completions.create({ ...ask(), response_format: person });
    expect(JSON.parse(answer.choices[0]?.message.content ?? '')).toEqual({ name: 'William Shakespeare', age: 52 });
    expect(sent().response_format).toEqual({ type: 'json_schema', json_schema: person.json_schema });
  });

  it('of an agent: the tool rounds run first, every model call carries the format, and the answer is checked', async () => {
    fake.script({ toolCalls: [{ name: 'add', arguments: { a: 40, b: 12 } }] }, { text: '{"name":"William Shakespeare","age":52}' });
    const answer = await client.chat.completions.create({ ...ask({ model: projectId }), response_format: person });
    expect(answer.choices[0]?.message.content).toBe('{"name":"William Shakespeare","age":52}');
    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) expect(request.body.response_format).toMatchObject({ type: 'json_schema' });
    expect((sent(0).tools as unknown[]).length).toBe(1);
  });

  it('that does not follow the schema is a 502 naming the problem, and nothing of the turn is stored', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    fake.script({ text: '{"name":"William Shakespeare","age":"fifty-two"}' });
    const error = await client.chat.completions.create({ ...ask({ model: projectId, chatId: chat.id }), response_format: person } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 502, error: { code: 'upstream_error', type: 'api_error' } });
    expect((error as Error).message).toContain('does not follow the JSON schema "person" of response_format: answer.age must be integer');
    expect((await s.call('GET', `/api/chats/${chat.id}/messages`)).body.messages).toEqual([]);
    // Text that is not JSON at all.
    fake.script({ text: 'William Shakespeare, aged 52.' });
    await expect(client.chat.completions.create({ ...ask(), response_format: person })).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining('it is not JSON'),
    });
  });

  it('streamed: the deltas come as they are written, and an answer off the schema ends the stream with the error', async () => {
    fake.script({ text: '{"name": "Ada", "age": 36}' });
    let text = '';
    for await (const chunk of await client.chat.completions.create({ ...ask(), response_format: person, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
    expect(JSON.parse(text)).toEqual({ name: 'Ada', age: 36 });

    fake.script({ text: '{"name": "Ada"}' });
    const res = await fetch(`${s.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask(), response_format: person, stream: true }),
    });
    const body = await res.text();
    expect(body).toContain('"content":"{\\"name\\": ');
    expect(body).toMatch(/data: \{"error":\{"message":"The model's answer does not follow the JSON schema \\"person\\" of response_format: answer must have required property 'age'/);
    expect(body).not.toContain('"finish_reason":"stop"');
    expect(body.trim().split('\n').at(-1)).toMatch(/^data: \{"error":/);
  });

  it('on the chat-scoped route with a resumable stream: the answer is recorded and stored', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    const stream = (await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } })).body.stream;
    fake.script({ text: '{"name":"Ada","age":36}' });
    const res = await s.call('POST', '/api/v1/ai/chat/completions', { body: { ...ask({ model: projectId }), chatId: chat.id, streamId: stream.id, response_format: person } });
    expect(res).toMatchObject({ status: 200, body: { success: true, choices: [{ message: { content: '{"name":"Ada","age":36}' } }] } });
    const replay = await fetch(`${s.url}/api/chats/${chat.id}/streams/${stream.id}`, { headers: { authorization: `Bearer ${s.keyA}` } });
    expect(await replay.text()).toContain('"finish_reason":"stop"');
    const messages = (await s.call('GET', `/api/chats/${chat.id}/messages`)).body.messages;
    expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'Who wrote Hamlet?'],
      ['assistant', '{"name":"Ada","age":36}'],
    ]);
  });
});

describe('a json_object answer', () => {
  it('must be a JSON object', async () => {
    fake.script({ text: '{"ok":true}' });
    expect((await client.chat.completions.create({ ...ask(), response_format: { type: 'json_object' } })).choices[0]?.message.content).toBe('{"ok":true}');
    expect(sent().response_format).toEqual({ type: 'json_object' });
    fake.script({ text: '[1, 2]' });
    await expect(client.chat.completions.create({ ...ask(), response_format: { type: 'json_object' } })).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining('response_format json_object: it is an array, not a JSON object'),
    });
  });
});

describe('a model without structured outputs (Ollama)', () => {
  it('is told the format in the system prompt, not sent response_format, and its answer is checked', async () => {
    fake.script({ text: '{"name":"Ada","age":36}' });
    const answer = await client.chat.completions.create({ ...ask({ model: ollamaProject }), response_format: person });
    expect(answer.choices[0]?.message.content).toBe('{"name":"Ada","age":36}');
    expect(sent()).not.toHaveProperty('response_format');
    const system = (sent().messages as { role: string; content: string }[])[0];
    expect(system?.role).toBe('system');
    expect(system?.content).toContain('Answer with one JSON value and nothing else');
    expect(system?.content).toContain('named person (A person)');
    expect(system?.content).toContain('"required":["name","age"]');
    fake.script({ text: 'Sure! Here it is: {"name":"Ada"}' });
    await expect(client.chat.completions.create({ ...ask({ model: ollamaProject }), response_format: person })).rejects.toMatchObject({ status: 502 });
  });
});

describe('refused before any model call', () => {
  const refused = async (format: unknown, message: string) => {
    const res = await s.call('POST', '/api/v1/chat/completions', { body: { ...ask(), response_format: format } });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request', error: { type: 'invalid_request_error' } } });
    expect(res.body.message).toContain(message);
  };

  it('a schema too deep, too large, or not a JSON Schema; a bad name', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { x: deep } };
    await refused({ type: 'json_schema', json_schema: { name: 'deep', schema: deep } }, 'response_format.json_schema.schema: nested deeper than 32 levels');
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`property_${i}`, { type: 'string' }])) };
    await refused({ type: 'json_schema', json_schema: { name: 'wide', schema: wide } }, 'response_format.json_schema.schema: larger than 65536 characters of JSON');
    await refused({ type: 'json_schema', json_schema: { name: 'bad', schema: { type: 'nothing' } } }, 'response_format.json_schema.schema: not a valid JSON Schema');
    await refused({ type: 'json_schema', json_schema: { name: 'a name', schema: { type: 'object' } } }, 'response_format.json_schema.name: must be 1 to 64 letters');
    await refused({ type: 'json_schema', json_schema: { name: 'x' } }, 'response_format.json_schema.schema');
    await refused({ type: 'yaml' }, 'response_format');
    expect(fake.requests).toEqual([]);
  });
});
