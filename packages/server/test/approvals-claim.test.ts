import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentTool, ToolSource } from '@agent-platform/core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';

// A paused turn is continued once: the built server's routes on a real SQLite file, the loopback
// OpenAI fake as the model and an agent tool marked for approval that counts its runs (and takes
// a moment, so a second continuation would meet the first). The continuation of a turn paused in
// a recorded stream is appended to that stream.

let fake: FakeChatServer;
let s: TestServer;
let projectId: string;
const runs: unknown[] = [];
const wipe: AgentTool = {
  definition: { name: 'wipe', description: 'Wipes a disk', parameters: { type: 'object', properties: { disk: { type: 'string' } } } },
  requiresApproval: true,
  async run(args) {
    runs.push(args);
    await sleep(400);
    return 'wiped';
  },
};
const source: ToolSource = { tools: async () => [wipe] };

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '5000' }, toolSources: [source] });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Disks', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  runs.length = 0;
});

/** A new chat with a turn paused at a call of `wipe`, and its approval's id. */
async function paused(options: { streamId?: (chatId: string) => Promise<string> } = {}) {
  const chatId = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat.id as string;
  const streamId = options.streamId ? await options.streamId(chatId) : undefined;
  fake.script({ text: 'Wiping.', toolCalls: [{ id: 'call_wipe', name: 'wipe', arguments: { disk: 'd1' } }] });
  const answer = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'user', content: 'Wipe d1' }], ...(streamId ? { streamId } : {}) } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return { chatId, streamId, id: answer.body.approvals[0].id as string };
}
const toolMessages = async (chatId: string) => ((await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;

it('a message sent while the approved call runs is refused (409, continuing); the tool runs once', async () => {
  const { chatId, id } = await paused();
  fake.script({ text: 'Wiped d1.' });
  const decision = s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'approve' } });
  while (runs.length === 0) await sleep(10);
  const message = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'user', content: 'Wipe it now' }] } });
  expect(message.status, JSON.stringify(message.body)).toBe(409);
  expect(message.body.message).toContain('already being continued');
  expect(message.body.message).toContain('every decision is recorded');
  const continued = await decision;
  expect(continued.status, JSON.stringify(continued.body)).toBe(200);
  expect(continued.body.choices[0].message.content).toBe('Wiped d1.');
  expect(runs).toHaveLength(1);
  expect(await toolMessages(chatId)).toBe(1);
});

it('a decision and a message at the same moment: one continues the turn, the other is 409; the tool runs once', async () => {
  for (let round = 0; round < 3; round++) {
    runs.length = 0;
    const { chatId, id } = await paused();
    fake.script({ text: 'Wiped d1.' });
    const [decision, message] = await Promise.all([
      s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'approve' } }),
      s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'user', content: 'Go on' }] } }),
    ]);
    expect([decision.status, message.status].sort(), JSON.stringify([decision.body, message.body])).toEqual([200, 409]);
    expect(runs).toHaveLength(1);
    expect(await toolMessages(chatId)).toBe(1);
    // The decision is recorded whichever continued.
    expect((await s.call('GET', `/api/v1/approvals/${id}`)).body.approval.state).toBe('approved');
  }
});

/** The events of a stream read over HTTP (after `lastEventId`): ids and chunks, `[DONE]` left out. */
async function readStream(chatId: string, streamId: string, lastEventId?: number) {
  const res = await fetch(`${s.url}/api/chats/${chatId}/streams/${streamId}`, { headers: { authorization: `Bearer ${s.keyA}`, ...(lastEventId ? { 'last-event-id': String(lastEventId) } : {}) } });
  const blocks = (await res.text()).split('\n\n').filter((b) => b.startsWith('id: '));
  return blocks.map((b) => {
    const [idLine, dataLine] = b.split('\n');
    return { id: Number(idLine?.slice(4)), chunk: JSON.parse((dataLine as string).slice(6)) as Record<string, any> };
  });
}
const textOf = (events: readonly { chunk: Record<string, any> }[]) => events.map((e) => e.chunk.choices?.[0]?.delta?.content ?? '').join('');

it('the continuation of a turn paused in a recorded stream is appended to that stream', async () => {
  const { chatId, streamId, id } = await paused({
    streamId: async (chat) => (await s.call('POST', `/api/chats/${chat}/streams`, { body: { chatId: chat } })).body.stream.id as string,
  });
  const stream = streamId as string;
  // The stream ends at the pause as the live answer did: the approval, then finish_reason tool_calls.
  const before = await readStream(chatId, stream);
  expect(before.find((e) => e.chunk.approval)?.chunk.approval.id).toBe(id);
  expect(before.map((e) => e.chunk.choices?.[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
  const last = before.at(-1)?.id as number;

  fake.script({ text: 'Wiped d1.' });
  // The decision names no stream: its answer is the continuation, and the paused stream records it.
  const continued = await s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'approve' } });
  expect(continued.status, JSON.stringify(continued.body)).toBe(200);
  expect(continued.body.choices[0].message.content).toBe('Wiped d1.');
  // A reader that reconnects with the last id it had gets the continuation, after the approval.
  const after = await readStream(chatId, stream, last);
  expect(after[0]?.id).toBe(last + 1);
  expect(after.find((e) => e.chunk.toolResult)?.chunk.toolResult).toMatchObject({ id: 'call_wipe', name: 'wipe', content: 'wiped' });
  expect(textOf(after)).toBe('Wiped d1.');
  expect(after.map((e) => e.chunk.choices?.[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
  // Read from the start, the stream holds the paused turn, then its continuation.
  const whole = await readStream(chatId, stream);
  expect(whole.map((e) => e.id)).toEqual([...before, ...after].map((e) => e.id));
  expect(textOf(whole)).toBe('Wiping.Wiped d1.');
});
