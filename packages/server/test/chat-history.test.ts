import { countTokens } from '@agent-platform/core/internal';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';

// How much of a long chat goes upstream: the server's token budget (--history-tokens, set here
// by its variable) holds every request under it, the system prompt and the knowledge excerpts
// always in, the newest whole turns after them, and a tool call never without its results (the
// loopback model refuses such a request as OpenAI does). Runs in both storage modes: the chat is
// read from its end.

const BUDGET = 700;

type Sent = { role: string; content?: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string };

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_HISTORY_TOKENS: String(BUDGET) } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Archive', model: 'gpt-4o-mini', provider: 'openai', instructions: 'You are the archivist of ACME.' } })).body.project.id;
  const doc = await s.call('POST', '/api/knowledge/documents', {
    body: { projectId, fileName: 'ledger.md', fileType: 'md', sourceType: 'upload', content: '# Ledger\n\nThe ledger of turn records is kept in the archive vault.' },
  });
  await s.indexed(doc.body.documentId);
});
afterAll(async () => {
  await s.stop();
  await fake.close();
});

/** Tokens of messages as sent, counted independently of the server: each text whole (o200k), and 4 per message and per call for the framing. */
const tokensOf = (messages: readonly Sent[]) =>
  messages.reduce((n, m) => n + 4 + countTokens(m.content ?? '') + (m.tool_calls ?? []).reduce((k, c) => k + 4 + countTokens(c.function.name) + countTokens(c.function.arguments), 0), 0);
const lastSent = () => (fake.lastRequest()?.body as { messages?: Sent[] } | undefined)?.messages ?? [];
const question = (n: number) => `Turn ${n}: what does the turn record ledger say about shipment ${n}? ${'Please check the archive carefully. '.repeat(4)}`;
const ask = (chatId: string, content: string, extra: Record<string, unknown> = {}) =>
  client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content }], chatId, ...extra } as never) as Promise<OpenAI.Chat.Completions.ChatCompletion>;

/** The turns a request carried: the numbers of its user messages, in order. */
const turnsIn = (messages: readonly Sent[]) => messages.filter((m) => m.role === 'user').map((m) => Number(/^Turn (\d+):/.exec(m.content ?? '')?.[1]));

describe('chat history within the token budget', () => {
  it("keeps a long chat's upstream requests under the budget: the system prompt and excerpts, then the newest whole turns", async () => {
    const chatId = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat.id;
    let longest = 0;
    for (let n = 0; n < 30; n++) {
      await ask(chatId, question(n));
      const sent = lastSent();
      const tokens = tokensOf(sent);
      longest = Math.max(longest, tokens);
      expect(tokens, `turn ${n}`).toBeLessThanOrEqual(BUDGET);
      expect(sent[0]?.role).toBe('system');
      expect(sent[0]?.content).toContain('You are the archivist of ACME.');
      expect(sent[0]?.content).toContain('[1] ledger.md');
      // After the system message: whole turns (each starts with its question), the newest ones, in order.
      expect(sent[1]?.role).toBe('user');
      const turns = turnsIn(sent);
      expect(turns.at(-1)).toBe(n);
      expect(turns).toEqual(Array.from({ length: turns.length }, (_, i) => n - turns.length + 1 + i));
      for (const m of sent.filter((m) => m.role === 'assistant')) expect(m.content).toMatch(/^You said: Turn \d+:/);
    }
    // The budget is what holds it: the chat is far longer, and what is sent fills most of the budget.
    const stored = (await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages;
    expect(stored).toHaveLength(60);
    expect(tokensOf(stored.map((m: { role: string; content: string }) => ({ role: m.role, content: m.content })))).toBeGreaterThan(3 * BUDGET);
    expect(turnsIn(lastSent()).length).toBeGreaterThanOrEqual(3);
    expect(longest).toBeGreaterThan(BUDGET / 2);
  });

  it("sends a turn's tool calls with their results or not at all, and a pending call always with the results that answer it", async () => {
    const chatId = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat.id;
    const lookup = { type: 'function' as const, function: { name: 'lookup', description: 'Looks a shipment up', parameters: { type: 'object', properties: { id: { type: 'number' } } } } };
    const answerCall = async (question: string, id: number) => {
      fake.script({ toolCalls: [{ name: 'lookup', arguments: { id } }] });
      const asked = await ask(chatId, question, { tools: [lookup] });
      const call = asked.choices[0]?.message.tool_calls?.[0] as { id: string };
      expect(call.id).toBeTruthy();
      // The client runs it and continues the turn (OpenAI clients resend the conversation).
      await client.chat.completions.create({
        model: projectId,
        tools: [lookup],
        chatId,
        messages: [{ role: 'user', content: question }, asked.choices[0]?.message as never, { role: 'tool', tool_call_id: call.id, content: `shipment ${id}: delivered` }],
      } as never);
      return call.id;
    };
    await answerCall(question(0), 0);
    for (let n = 1; n < 6; n++) await ask(chatId, question(n));
    // A question so long that its turn never fits: the pending call still goes with its result.
    const huge = `Turn 6: ${'Look every shipment up in the archive ledger, one by one. '.repeat(80)}`;
    expect(countTokens(huge)).toBeGreaterThan(BUDGET);
    const pending = await answerCall(huge, 6);
    const continued = lastSent();
    const at = continued.findIndex((m) => m.role === 'assistant' && m.tool_calls?.some((c) => c.id === pending));
    expect(at).toBeGreaterThan(0);
    expect(continued[at + 1]).toMatchObject({ role: 'tool', tool_call_id: pending });
    expect(turnsIn(continued)).not.toContain(6);
    for (let n = 7; n < 12; n++) await ask(chatId, question(n));
    // Every request the model got was valid (the fake refuses a tool call without its results
    // and a result without its call, as OpenAI does), and each call it saw came with its results.
    expect(fake.requests.filter((r) => r.status !== 200)).toEqual([]);
    for (const request of fake.requests) {
      const sent = (request.body as { messages: Sent[] }).messages;
      sent.forEach((m, i) => {
        for (const [k, call] of (m.tool_calls ?? []).entries()) expect(sent[i + 1 + k]).toMatchObject({ role: 'tool', tool_call_id: call.id });
      });
    }
    expect(tokensOf(lastSent())).toBeLessThanOrEqual(BUDGET);
    expect(turnsIn(lastSent()).at(-1)).toBe(11);
  });
});
