import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// MCP sampling (docs/MCP.md): a project's MCP server that may sample (`allowSampling`) asks the
// project's own model for a completion during its tool call (server-everything's
// `trigger-sampling-request`), answered through the completions route with the model a
// loopback fake; the turn's max_tokens bounds it and its usage is counted in the turn's.
let s: TestServer;
let model: FakeChatServer;
let everything: ServerProcess;
let client: OpenAI;
let sampling: string;
let plain: string;

beforeAll(async () => {
  [model, everything] = await Promise.all([startFakeChatServer({ apiKey: 'sk-sampling' }), startEverything('streamableHttp')]);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  const credentialId = (await s.call('POST', '/api/v1/credentials', { body: { name: 'fake', provider: 'openai', apiKey: 'sk-sampling', baseUrl: model.url } })).body.credential.id;
  const project = async (name: string) => (await s.call('POST', '/api/projects/create', { body: { name, model: 'gpt-4o-mini', provider: 'openai', credentialId } })).body.project.id as string;
  [sampling, plain] = await Promise.all([project('sampling'), project('plain')]);
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await Promise.all([model?.close(), everything?.stop()]);
});

const addServer = (projectId: string, allowSampling?: boolean) =>
  s.call('POST', '/api/mcp/add-server', {
    body: { projectId, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp`, ...(allowSampling === undefined ? {} : { allowSampling }) },
  });
const toolNames = (res: { body: { tools: { name: string }[] } }) => res.body.tools.map((t) => t.name);

describe('MCP sampling', () => {
  it('is off by default: the capability is not declared, so the server offers no sampling tool', async () => {
    const added = await addServer(plain);
    expect(added.status).toBe(201);
    expect(added.body.server.allowSampling).toBe(false);
    expect(toolNames(added)).toContain('echo');
    expect(toolNames(added)).not.toContain('trigger-sampling-request');
  });

  it("answers a server's sampling/createMessage during its tool call with the project's model, bounded by max_tokens, its usage counted", async () => {
    const added = await addServer(sampling, true);
    expect(added.status).toBe(201);
    expect(added.body.server.allowSampling).toBe(true);
    expect(toolNames(added)).toContain('trigger-sampling-request');
    const listed = await s.call('GET', `/api/mcp/servers?projectId=${sampling}`);
    expect(listed.body.servers[0].allowSampling).toBe(true);

    model.reset();
    model.script(
      { toolCalls: [{ name: 'mcp__everything__trigger-sampling-request', arguments: '{"prompt":"Say hi","maxTokens":500}' }], usage: { promptTokens: 100, completionTokens: 10 } },
      { text: 'Hi from the project model', usage: { promptTokens: 20, completionTokens: 5 } },
      { text: 'The server got its answer.', usage: { promptTokens: 200, completionTokens: 7 } },
    );
    const answer = await client.chat.completions.create({ model: sampling, messages: [{ role: 'user', content: 'Try sampling' }], max_tokens: 64 });
    expect(answer.choices[0]?.message.content).toBe('The server got its answer.');
    // Three model calls: the turn's, the server's sampling request, the turn's again.
    expect(model.requests).toHaveLength(3);
    const asked = model.requests[1]?.body as { messages: { role: string; content: unknown }[]; max_tokens?: number; max_completion_tokens?: number; temperature?: number; tools?: unknown };
    expect(asked.messages).toEqual([
      { role: 'system', content: 'You are a helpful test server.' },
      { role: 'user', content: 'Resource trigger-sampling-request context: Say hi' },
    ]);
    // The server asked for 500 tokens: the turn's max_tokens (64) bounds it.
    expect(asked.max_tokens ?? asked.max_completion_tokens).toBe(64);
    expect(asked.temperature).toBe(0.7);
    expect(asked.tools).toBeUndefined();
    // The tool's result (what the server made of the sampling answer) went back to the model.
    expect(JSON.stringify(model.requests[2]?.body)).toContain('Hi from the project model');
    expect(answer.usage).toMatchObject({ prompt_tokens: 320, completion_tokens: 22, total_tokens: 342 });
  });
});
