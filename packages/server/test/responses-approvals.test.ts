import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';

// Tool calls a person approves, on the responses route (the built server, a real SQLite file, a
// real JavaScript tool in its sandbox, the loopback OpenAI fake as the model), through the
// official openai client: the paused turn's response completes with an mcp_approval_request
// item, and an mcp_approval_response item with previous_response_id decides it and continues
// the turn as the next response.

type Sent = { role: string; content?: unknown; tool_call_id?: string };

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;

/** A tool that says what it removed: marked for approval. */
const REMOVE = {
  name: 'remove_file',
  description: 'Removes a file',
  language: 'javascript',
  code: 'function main(args) { return { removed: args.path } }',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  requiresApproval: true,
};

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '5000' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Files', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const tool = await s.call('POST', '/api/tools/create', { body: { projectId, ...REMOVE } });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const pauseStep = () => fake.script({ toolCalls: [{ id: 'call_rm', name: 'remove_file', arguments: { path: '/tmp/report.txt' } }] });
const lastSent = () => ((fake.requests.at(-1) as { body: unknown }).body as { messages: Sent[] }).messages;
const approvalState = async (id: string) => (await s.call('GET', `/api/v1/approvals/${id}`)).body.approval?.state as string;

/** A response paused at the marked call: its last output item, the approval request. */
async function paused(): Promise<{ response: OpenAI.Responses.Response; request: OpenAI.Responses.ResponseOutputItem.McpApprovalRequest }> {
  pauseStep();
  const response = await client.responses.create({ model: projectId, input: 'Remove the report' });
  const request = response.output.at(-1) as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
  return { response, request };
}

describe('approvals on the responses route', () => {
  it('completes with an mcp_approval_request; an approving mcp_approval_response runs the call and continues the turn as the next response', async () => {
    const { response, request } = await paused();
    expect(response.status).toBe('completed');
    expect(request).toMatchObject({ type: 'mcp_approval_request', server_label: 'agent_platform', name: 'remove_file', arguments: JSON.stringify({ path: '/tmp/report.txt' }) });
    expect(request.id).toMatch(/^apv_/);
    expect(await approvalState(request.id)).toBe('pending');
    // Another user's approval id is not found, and stays undecided.
    const other = new OpenAI({ apiKey: s.keyB, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
    const refused = await other.responses.create({ model: 'gpt-4o-mini', input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await approvalState(request.id)).toBe('pending');

    fake.script({ text: 'Removed /tmp/report.txt.' });
    const next = await client.responses.create({
      model: projectId,
      previous_response_id: response.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    });
    expect(next.status).toBe('completed');
    expect(next.output_text).toBe('Removed /tmp/report.txt.');
    // The approved tool ran in its sandbox; the model got its result after its call.
    expect(lastSent().slice(-2)).toEqual([
      expect.objectContaining({ role: 'assistant' }),
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_rm', content: JSON.stringify({ removed: '/tmp/report.txt' }) }),
    ]);
    expect(await approvalState(request.id)).toBe('approved');
    // The decision is the response's input item; decided once (a second answer is a conflict).
    const items = await client.responses.inputItems.list(next.id);
    expect(items.data).toEqual([expect.objectContaining({ type: 'mcp_approval_response', approval_request_id: request.id, approve: true })]);
    const again = await client.responses
      .create({ previous_response_id: next.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false }] } as never)
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OpenAI.ConflictError);
  });

  it('streams the request as an output item, and a denial with its reason continues the stream from the denied call', async () => {
    pauseStep();
    const stream = client.responses.stream({ model: projectId, input: 'Remove the report' });
    const added: string[] = [];
    stream.on('response.output_item.added', (e) => added.push(e.item.type));
    const response = await stream.finalResponse();
    expect(added).toEqual(['mcp_approval_request']);
    const request = response.output.at(-1) as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;

    fake.script({ text: 'I left it in place.' });
    const next = client.responses.stream({
      previous_response_id: response.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'keep it' }],
    } as never);
    const done = await next.finalResponse();
    expect(done.output_text).toBe('I left it in place.');
    const result = lastSent().at(-1);
    expect(result).toMatchObject({ role: 'tool', tool_call_id: 'call_rm' });
    expect(String(result?.content)).toContain('keep it');
    expect((await s.call('GET', `/api/v1/approvals/${request.id}`)).body.approval).toMatchObject({ state: 'denied', reason: 'keep it' });
  });

  it('keeps POST /api/v1/approvals/{id} for a turn paused on the responses route', async () => {
    const { request } = await paused();
    fake.script({ text: 'Removed.' });
    const continued = await s.call('POST', `/api/v1/approvals/${request.id}`, { body: { decision: 'approve' } });
    expect(continued.status, JSON.stringify(continued.body)).toBe(200);
    expect(continued.body.choices[0].message.content).toBe('Removed.');
    expect(lastSent().at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_rm', content: JSON.stringify({ removed: '/tmp/report.txt' }) });
  });

  it('keeps a turn paused with store false in a new chat, continued by the answer alone', async () => {
    pauseStep();
    const response = await client.responses.create({ model: projectId, input: 'Remove the report', store: false });
    const request = response.output.at(-1) as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
    expect(request.type).toBe('mcp_approval_request');
    fake.script({ text: 'Removed.' });
    const next = await client.responses.create({ input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }] } as never);
    expect(next.output_text).toBe('Removed.');
    expect(lastSent().at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_rm' });
  });

  it('refuses an answer of another chat than the previous response, deciding nothing', async () => {
    const first = await paused();
    const second = await paused();
    const refused = await s.call('POST', '/api/v1/responses', {
      body: { previous_response_id: second.response.id, input: [{ type: 'mcp_approval_response', approval_request_id: first.request.id, approve: true }] },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('input.0.approval_request_id');
    expect(await approvalState(first.request.id)).toBe('pending');
  });
});
