import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropicServer, startFakeAnthropicServer } from '../../adapters-models/test/fakes/anthropic-server.js';
import { type FakeGoogleServer, startFakeGoogleServer } from '../../adapters-models/test/fakes/google-server.js';
import { signFunctionCall } from '../../adapters-models/test/fakes/google-wire.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// A client's tool call continued with the same chatId, through the official openai client against
// the built server and the providers' loopback fakes, which refuse what the real APIs refuse:
// Claude with extended thinking wants the signed thinking block of the step that called the tool
// back with the result; Gemini 3 wants the thought signature of the turn's function calls back.

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
let anthropic: FakeAnthropicServer;
let google: FakeGoogleServer;
let s: TestServer;
let client: OpenAI;

const weather: OpenAI.Chat.Completions.ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const question: Message = { role: 'user', content: 'What is the weather in Oslo?' };

beforeAll(async () => {
  [anthropic, google] = await Promise.all([
    startFakeAnthropicServer({ apiKey: 'sk-ant-test-key-0001', models: ['claude-test'] }),
    startFakeGoogleServer({ apiKey: 'gemini-key-0004', models: ['gemini-3-pro-preview'] }),
  ]);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await s.stop();
  await Promise.all([anthropic.close(), google.close()]);
});

/** A project on the provider with the credential of the fake, and a chat of it. */
async function chatOn(provider: Record<string, unknown>, project: Record<string, unknown>) {
  const cred = await s.call('POST', '/api/v1/credentials', { body: { name: String(provider.provider), default: false, ...provider } });
  expect(cred.status, JSON.stringify(cred.body)).toBe(201);
  const created = await s.call('POST', '/api/projects/create', { body: { name: 'agent', credentialId: cred.body.credential.id, ...project } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const projectId = created.body.project.id as string;
  const chat = await s.call('POST', '/api/chats', { body: { projectId } });
  expect(chat.status, JSON.stringify(chat.body)).toBe(201);
  return { projectId, chatId: chat.body.chat.id as string };
}

/** The first request asks; the client runs the call and posts its result, resending the conversation, with the same chatId. */
async function callAndContinue(projectId: string, chatId: string, stream: boolean) {
  const body = (messages: Message[]) => ({ model: projectId, chatId, messages, tools: [weather], max_tokens: 4096 }) as never;
  const first = (await client.chat.completions.create(body([question]))) as OpenAI.Chat.Completions.ChatCompletion;
  expect(first.choices[0]?.finish_reason).toBe('tool_calls');
  const call = first.choices[0]?.message.tool_calls?.[0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
  const messages: Message[] = [question, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: 'Rain, 8 °C' }];
  if (!stream) return ((await client.chat.completions.create(body(messages))) as OpenAI.Chat.Completions.ChatCompletion).choices[0]?.message.content;
  let text = '';
  for await (const chunk of (await client.chat.completions.create({ ...(body(messages) as object), stream: true } as never)) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
    text += chunk.choices[0]?.delta.content ?? '';
  }
  return text;
}

/** What the chat shows: never the provider's signatures. */
async function expectNothingShown(chatId: string, secrets: string[]) {
  const shown = await s.call('GET', `/api/chats/${chatId}/messages`);
  expect(shown.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  expect(shown.body.messages[1].toolCalls).toEqual([{ id: expect.any(String), name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  for (const secret of secrets) expect(JSON.stringify(shown.body)).not.toContain(secret);
}

describe("a client's tool call continued by chatId", () => {
  for (const stream of [false, true]) {
    it(`on Claude with extended thinking sends the step's signed thinking block back with the result (${stream ? 'streamed' : 'whole'})`, async () => {
      const { projectId, chatId } = await chatOn(
        { provider: 'anthropic', apiKey: 'sk-ant-test-key-0001', baseUrl: anthropic.url },
        { provider: 'anthropic', model: 'claude-test', providerOptions: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
      );
      anthropic.script({ reasoning: 'The client can look the weather up.', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] }, { text: 'Rainy in Oslo.' });
      expect(await callAndContinue(projectId, chatId, stream)).toBe('Rainy in Oslo.');
      const continued = anthropic.lastRequest();
      expect(continued?.status).toBe(200);
      const assistant = ((continued?.body.messages ?? []) as { role: string; content: Record<string, unknown>[] }[]).find((m) => m.role === 'assistant');
      expect(assistant?.content[0]).toEqual({ type: 'thinking', thinking: 'The client can look the weather up.', signature: expect.any(String) });
      await expectNothingShown(chatId, [String(assistant?.content[0]?.signature), 'The client can look']);
    });
  }

  it("on Gemini 3 sends the call's thought signature back with the result", async () => {
    const { projectId, chatId } = await chatOn({ provider: 'google', apiKey: 'gemini-key-0004', baseUrl: google.url }, { provider: 'google', model: 'gemini-3-pro-preview' });
    google.script({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'Rainy in Oslo.' });
    expect(await callAndContinue(projectId, chatId, true)).toBe('Rainy in Oslo.');
    const continued = google.lastRequest();
    expect(continued?.status).toBe(200);
    const signature = signFunctionCall('get_weather', { city: 'Oslo' });
    const model = ((continued?.body.contents ?? []) as { role: string; parts: Record<string, unknown>[] }[]).find((c) => c.role === 'model');
    // The signature the fake gave, not the skip value the AI SDK would put in its place.
    expect(model?.parts[0]).toMatchObject({ functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: signature });
    await expectNothingShown(chatId, [signature]);
  });
});
