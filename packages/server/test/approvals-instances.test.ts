import { postgresDatabase } from '@agent-platform/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type Cluster, call, contentOf, firstKeyOf, type Instance, type SseEvent, sse, startCluster } from './multi-instance-helpers.js';

// Approvals across instances: two built servers on one PostgreSQL database (the loopback OpenAI
// fake as their model). A turn paused on A is approved on B, which continues it from storage
// (A's process is not involved), and A reads the stored turn and the decision.

let cluster: Cluster;
let fake: FakeChatServer;
let a: Instance;
let b: Instance;
let key = '';
/** The JSON chunks of an SSE answer (`[DONE]` left out). */
const chunks = (events: readonly SseEvent[]) => events.filter((e) => e.data.startsWith('{')).map((e) => JSON.parse(e.data) as Record<string, any>);

beforeAll(async () => {
  [cluster, fake] = await Promise.all([startCluster(), startFakeChatServer()]);
  const database = await postgresDatabase();
  const start = (name: string) => cluster.start(name, { ...cluster.env(name, database, 'approvals'), OPENAI_BASE_URL: fake.url });
  a = await start('a');
  key = firstKeyOf(a) as string;
  b = await start('b');
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await fake?.close();
});

it('a turn paused on A is approved on B, continued there as a stream, and stored for A to read', async () => {
  const projectId = (await call(a, key, 'POST', '/api/projects/create', { name: 'files', model: 'gpt-4o-mini', provider: 'openai' })).body.project.id as string;
  const tool = await call(a, key, 'POST', '/api/tools/create', {
    projectId,
    name: 'remove_file',
    language: 'javascript',
    code: 'function main(args) { return { removed: args.path } }',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    requiresApproval: true,
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  const chatId = (await call(a, key, 'POST', '/api/chats', { projectId })).body.chat.id as string;
  fake.script({ text: 'Removing it.', toolCalls: [{ id: 'call_rm', name: 'remove_file', arguments: { path: '/tmp/a' } }] });
  const paused = await sse(a, key, '/api/v1/chat/completions', { body: { model: projectId, chatId, stream: true, messages: [{ role: 'user', content: 'Remove /tmp/a' }] } });
  const approval = chunks(paused)
    .map((c) => c.approval as { id: string; tool: string } | undefined)
    .find(Boolean);
  expect(approval?.tool).toBe('remove_file');
  expect(
    chunks(paused)
      .map((c) => c.choices?.[0]?.finish_reason)
      .filter(Boolean),
  ).toEqual(['tool_calls']);
  // B sees the pending approval A stored; the other user does not.
  expect((await call(b, key, 'GET', `/api/v1/approvals?chatId=${chatId}&state=pending`)).body.approvals.map((x: { id: string }) => x.id)).toEqual([approval?.id]);

  fake.script({ text: 'Removed /tmp/a.' });
  const continued = await sse(b, key, `/api/v1/approvals/${approval?.id}`, { body: { decision: 'approve', stream: true } });
  expect(contentOf(continued)).toBe('Removed /tmp/a.');
  const result = chunks(continued)
    .map((c) => c.toolResult)
    .find(Boolean);
  expect(result).toEqual({ id: 'call_rm', name: 'remove_file', content: JSON.stringify({ removed: '/tmp/a' }), isError: false });
  const messages = (await call(a, key, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string }[];
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  expect(messages.at(-1)?.content).toBe('Removed /tmp/a.');
  expect((await call(a, key, 'GET', `/api/v1/approvals/${approval?.id}`)).body.approval.state).toBe('approved');
  // Decided once, whichever instance is asked next.
  expect((await call(a, key, 'POST', `/api/v1/approvals/${approval?.id}`, { decision: 'deny' })).status).toBe(409);
}, 120_000);

it('the last decision on A and a message on B at the same moment continue the turn once', async () => {
  const projectId = (await call(a, key, 'POST', '/api/projects/create', { name: 'once', model: 'gpt-4o-mini', provider: 'openai' })).body.project.id as string;
  const tool = await call(a, key, 'POST', '/api/tools/create', {
    projectId,
    name: 'wipe',
    language: 'javascript',
    code: 'function main(args) { return { wiped: args.disk } }',
    parameters: { type: 'object', properties: { disk: { type: 'string' } } },
    requiresApproval: true,
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  for (let round = 0; round < 3; round++) {
    const chatId = (await call(a, key, 'POST', '/api/chats', { projectId })).body.chat.id as string;
    fake.script({ text: 'Wiping.', toolCalls: [{ id: 'call_wipe', name: 'wipe', arguments: { disk: 'd1' } }] });
    const paused = await call(a, key, 'POST', '/api/v1/chat/completions', { model: projectId, chatId, messages: [{ role: 'user', content: 'Wipe d1' }] });
    const id = paused.body.approvals[0].id as string;
    fake.reset();
    fake.script({ text: 'Wiped d1.' });
    const [decision, message] = await Promise.all([
      call(a, key, 'POST', `/api/v1/approvals/${id}`, { decision: 'approve' }),
      call(b, key, 'POST', '/api/v1/chat/completions', { model: projectId, chatId, messages: [{ role: 'user', content: 'Go on' }] }),
    ]);
    expect([decision.status, message.status].sort(), JSON.stringify([decision.body, message.body])).toEqual([200, 409]);
    // The tool ran once: one continuation sent its result to the model, and the chat holds one result.
    const results = fake.requests.flatMap((r) =>
      ((r.body as { messages: { role: string; tool_call_id?: string }[] }).messages ?? []).filter((m) => m.role === 'tool' && m.tool_call_id === 'call_wipe'),
    );
    expect(results).toHaveLength(1);
    const messages = (await call(b, key, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string }[];
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect((await call(b, key, 'GET', `/api/v1/approvals/${id}`)).body.approval.state).toBe('approved');
  }
}, 120_000);
