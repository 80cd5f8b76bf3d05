import { postgresDatabase } from '@agent-platform/core/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type Cluster, call, firstKeyOf, type Instance, startCluster } from './multi-instance-helpers.js';

// Approvals on the responses route across instances: two built servers on one PostgreSQL
// database, each with its own loopback OpenAI fake as the model (so a test sees which instance
// asked the model what), through the official openai client. A response paused on A (its
// mcp_approval_request item) is answered on B with an mcp_approval_response item and
// previous_response_id: B runs the approved call in its sandbox and completes the turn, which A
// then reads.

type Sent = { role: string; content?: unknown; tool_call_id?: string };

let cluster: Cluster;
let fakeA: FakeChatServer;
let fakeB: FakeChatServer;
let a: Instance;
let b: Instance;
let key = '';
let projectId = '';
const client = (on: Instance) => new OpenAI({ apiKey: key, baseURL: `${on.url}/api/v1`, maxRetries: 0 });

beforeAll(async () => {
  [cluster, fakeA, fakeB] = await Promise.all([startCluster(), startFakeChatServer(), startFakeChatServer()]);
  const database = await postgresDatabase();
  const start = (name: string, fake: FakeChatServer) => cluster.start(name, { ...cluster.env(name, database, 'responses_approvals'), OPENAI_BASE_URL: fake.url });
  a = await start('a', fakeA);
  key = firstKeyOf(a) as string;
  b = await start('b', fakeB);
  projectId = (await call(a, key, 'POST', '/api/projects/create', { name: 'files', model: 'gpt-4o-mini', provider: 'openai' })).body.project.id as string;
  const tool = await call(a, key, 'POST', '/api/tools/create', {
    projectId,
    name: 'remove_file',
    language: 'javascript',
    code: 'function main(args) { return { removed: args.path } }',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    requiresApproval: true,
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await Promise.all([fakeA?.close(), fakeB?.close()]);
});

it('a response paused on A is answered on B with an mcp_approval_response: B runs the call and completes the turn, A reads it', async () => {
  fakeA.script({ toolCalls: [{ id: 'call_rm', name: 'remove_file', arguments: { path: '/tmp/report.txt' } }] });
  const response = await client(a).responses.create({ model: projectId, input: 'Remove the report' });
  expect(response.status).toBe('completed');
  const request = response.output.at(-1) as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
  expect(request).toMatchObject({ type: 'mcp_approval_request', name: 'remove_file', arguments: JSON.stringify({ path: '/tmp/report.txt' }) });
  // B reads the pause A stored.
  expect((await call(b, key, 'GET', `/api/v1/approvals/${request.id}`)).body.approval).toMatchObject({ state: 'pending', tool: 'remove_file' });

  fakeB.script({ text: 'Removed /tmp/report.txt.' });
  const next = await client(b).responses.create({
    model: projectId,
    previous_response_id: response.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
  });
  expect(next.status).toBe('completed');
  expect(next.output_text).toBe('Removed /tmp/report.txt.');
  expect(next.previous_response_id).toBe(response.id);
  // B ran the approved call and asked its model; A asked its model only for the paused step.
  expect(fakeA.requests).toHaveLength(1);
  expect(fakeB.requests).toHaveLength(1);
  const sent = ((fakeB.requests[0] as { body: unknown }).body as { messages: Sent[] }).messages;
  expect(sent.slice(-3).map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  expect(sent.at(-1)).toEqual(expect.objectContaining({ role: 'tool', tool_call_id: 'call_rm', content: JSON.stringify({ removed: '/tmp/report.txt' }) }));

  // A reads the stored turn, the response B made and the decision.
  const read = await client(a).responses.retrieve(next.id);
  expect(read).toMatchObject({ id: next.id, status: 'completed', previous_response_id: response.id });
  expect(read.output_text).toBe('Removed /tmp/report.txt.');
  const chatId = (response as unknown as { chatId: string }).chatId;
  const messages = (await call(a, key, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string }[];
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  expect(messages.at(-1)?.content).toBe('Removed /tmp/report.txt.');
  expect((await call(a, key, 'GET', `/api/v1/approvals/${request.id}`)).body.approval.state).toBe('approved');
  // Decided once, whichever instance is answered next.
  const again = await client(a)
    .responses.create({ previous_response_id: next.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false }] } as never)
    .catch((e: unknown) => e);
  expect(again).toBeInstanceOf(OpenAI.ConflictError);
  expect(fakeA.requests).toHaveLength(1);
}, 120_000);

it('the same answer on A and on B at the same moment continues the turn once: the other is a conflict', async () => {
  for (let round = 0; round < 3; round++) {
    fakeA.reset();
    fakeB.reset();
    fakeA.script({ toolCalls: [{ id: 'call_rm', name: 'remove_file', arguments: { path: `/tmp/${round}` } }] });
    const response = await client(a).responses.create({ model: projectId, input: `Remove /tmp/${round}` });
    const request = response.output.at(-1) as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
    fakeA.script({ text: 'Removed on A.' });
    fakeB.script({ text: 'Removed on B.' });
    const answer = (on: Instance) =>
      client(on)
        .responses.create({ previous_response_id: response.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] } as never)
        .then(
          (r) => r as OpenAI.Responses.Response,
          (e: unknown) => e,
        );
    const [onA, onB] = await Promise.all([answer(a), answer(b)]);
    const done = [onA, onB].filter((r) => !(r instanceof Error)) as OpenAI.Responses.Response[];
    const refused = [onA, onB].filter((r) => r instanceof Error);
    expect(done, JSON.stringify([onA, onB].map(String))).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(OpenAI.ConflictError);
    // The call ran once: one continuation sent its result to a model, and the chat holds one result.
    const results = [...fakeA.requests, ...fakeB.requests].flatMap((r) => ((r.body as { messages: Sent[] }).messages ?? []).filter((m) => m.role === 'tool'));
    expect(results).toHaveLength(1);
    const chatId = (response as unknown as { chatId: string }).chatId;
    const messages = (await call(b, key, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages.at(-1)?.content).toBe(done[0]?.output_text);
  }
}, 120_000);
