import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropicServer, startFakeAnthropicServer } from '../../adapters-models/test/fakes/anthropic-server.js';
import { type FakeAzureServer, startFakeAzureServer } from '../../adapters-models/test/fakes/azure-server.js';
import { type FakeBedrockServer, startFakeBedrockServer } from '../../adapters-models/test/fakes/bedrock-server.js';
import { type FakeGoogleServer, startFakeGoogleServer } from '../../adapters-models/test/fakes/google-server.js';
import { type FakeResponsesServer, startFakeResponsesServer } from '../../adapters-models/test/fakes/responses-server.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// The providers of the registry beyond OpenAI-compatible servers, through the built server:
// a credential with the provider's fields, its model list and test, a project's agent run
// through the official openai client, the project's provider options on the provider's wire.
let anthropic: FakeAnthropicServer;
let azure: FakeAzureServer;
let responses: FakeResponsesServer;
let google: FakeGoogleServer;
let bedrock: FakeBedrockServer;
const AWS = { accessKeyId: 'AKIAFAKEKEYID0000001', secretAccessKey: 'aws-secret-NEVER-SHOWN-abcd' };
let s: TestServer;
let client: OpenAI;

beforeAll(async () => {
  [anthropic, azure, responses, google, bedrock] = await Promise.all([
    startFakeAnthropicServer({ apiKey: 'sk-ant-test-key-0001', models: ['claude-test'] }),
    startFakeAzureServer({ apiKey: 'azure-key-0002' }),
    startFakeResponsesServer({ apiKey: 'sk-responses-0003' }),
    startFakeGoogleServer({ apiKey: 'gemini-key-0004' }),
    startFakeBedrockServer({ credentials: AWS, region: 'eu-west-1' }),
  ]);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await s.stop();
  await Promise.all([anthropic.close(), azure.close(), responses.close(), google.close(), bedrock.close()]);
});

const credential = async (body: Record<string, unknown>) => {
  const res = await s.call('POST', '/api/v1/credentials', { body: { name: String(body.provider), ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.credential as { id: string; fields: Record<string, unknown>; secretsLast4: Record<string, string> };
};
const project = async (body: Record<string, unknown>) => {
  const res = await s.call('POST', '/api/projects/create', { body: { name: 'agent', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.project.id as string;
};
const ask = (model: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] });

describe('anthropic', () => {
  it("runs a project's agent on Claude with its extended thinking on the wire, and lists the credential's models", async () => {
    const cred = await credential({ provider: 'anthropic', apiKey: 'sk-ant-test-key-0001', baseUrl: anthropic.url });
    expect(cred).toMatchObject({ fields: {}, secretsLast4: { apiKey: '0001' } });
    expect((await s.call('GET', `/api/v1/credentials/${cred.id}/models`)).body.models).toEqual([{ id: 'claude-test' }]);
    expect((await s.call('POST', `/api/v1/credentials/${cred.id}/test`)).body).toMatchObject({ ok: true });
    const id = await project({ provider: 'anthropic', model: 'claude-test', credentialId: cred.id, providerOptions: { thinking: { type: 'enabled', budgetTokens: 2048 } } });
    anthropic.script({ text: 'Hello from Claude', reasoning: 'Thinking it over' });
    const answer = await client.chat.completions.create({ model: id, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 4096 });
    expect(answer.choices[0]?.message.content).toBe('Hello from Claude');
    expect(anthropic.lastRequest()).toMatchObject({ path: '/v1/messages', body: { model: 'claude-test', thinking: { type: 'enabled', budget_tokens: 2048 } } });
    expect(anthropic.lastRequest()?.headers['x-api-key']).toBe('sk-ant-test-key-0001');
  });

  it('a key Anthropic refuses is 502 naming the credential', async () => {
    const cred = await credential({ provider: 'anthropic', name: 'Wrong Claude key', apiKey: 'sk-ant-wrong-9999', baseUrl: anthropic.url, default: false });
    const id = await project({ provider: 'anthropic', model: 'claude-test', credentialId: cred.id });
    const error = (await ask(id).then(
      () => undefined,
      (e: unknown) => e,
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(error.message).toContain(`"Wrong Claude key" (${cred.id})`);
    expect(error.message).not.toContain('wrong-9999');
  });
});

describe('azure', () => {
  it('keeps the endpoint, API version and deployments as shown fields, checks the endpoint against the policy, and runs on the deployment', async () => {
    const cred = await credential({ provider: 'azure', apiKey: 'azure-key-0002', endpoint: azure.endpoint, apiVersion: '2024-10-21', deployments: { 'my-gpt': 'gpt-4o-mini' } });
    expect(cred).toMatchObject({ fields: { endpoint: azure.endpoint, apiVersion: '2024-10-21', deployments: { 'my-gpt': 'gpt-4o-mini' } }, secretsLast4: { apiKey: '0002' } });
    expect((await s.call('GET', `/api/v1/credentials/${cred.id}/models`)).body.models).toEqual([{ id: 'my-gpt' }]);
    const id = await project({ provider: 'azure', model: 'my-gpt', credentialId: cred.id });
    azure.script({ text: 'Hello from Azure' });
    expect((await ask(id)).choices[0]?.message.content).toBe('Hello from Azure');
    expect(azure.lastRequest()).toMatchObject({ path: '/openai/deployments/gpt-4o-mini/chat/completions' });
    expect(azure.lastRequest()?.query.get('api-version')).toBe('2024-10-21');
  });

  it("refuses an endpoint the outbound policy refuses, naming the field, and a field of another provider's", async () => {
    const refused = await s.call('POST', '/api/v1/credentials', { body: { name: 'meta', provider: 'azure', apiKey: 'k', endpoint: 'http://169.254.169.254' } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^endpoint: /);
    const openai = await credential({ provider: 'openai', apiKey: 'sk-x', default: false });
    const foreign = await s.call('PATCH', `/api/v1/credentials/${openai.id}`, { body: { data: { endpoint: azure.endpoint } } });
    expect(foreign.status).toBe(400);
    expect(foreign.body.message).toMatch(/^data\.endpoint: not a field of openai credentials/);
  });
});

describe('google', () => {
  it("runs a project's agent on Gemini with its safety settings on the wire, and lists the credential's models", async () => {
    const cred = await credential({ provider: 'google', apiKey: 'gemini-key-0004', baseUrl: google.url });
    expect((await s.call('GET', `/api/v1/credentials/${cred.id}/models`)).body.models).toContainEqual({ id: 'gemini-2.5-flash' });
    const safetySettings = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
    const id = await project({ provider: 'google', model: 'gemini-2.5-flash', credentialId: cred.id, providerOptions: { safetySettings } });
    google.script({ text: 'Hello from Gemini' });
    expect((await ask(id)).choices[0]?.message.content).toBe('Hello from Gemini');
    expect(google.lastRequest()).toMatchObject({ model: 'gemini-2.5-flash', apiKey: 'gemini-key-0004', body: { safetySettings } });
  });
});

describe('bedrock', () => {
  it('keeps the region and access key id as shown fields and the secret sealed, and runs an agent signed with SigV4 with its guardrail on the wire', async () => {
    const cred = await credential({ provider: 'bedrock', region: 'eu-west-1', ...AWS, baseUrl: bedrock.url });
    expect(cred).toMatchObject({ fields: { region: 'eu-west-1', accessKeyId: AWS.accessKeyId }, secretsLast4: { secretAccessKey: 'abcd' } });
    expect(JSON.stringify(cred)).not.toContain('NEVER-SHOWN');
    expect((await s.call('GET', `/api/v1/credentials/${cred.id}/models`)).body.models).toContainEqual({ id: 'amazon.nova-lite-v1:0' });
    const guardrailConfig = { guardrailIdentifier: 'gr-test', guardrailVersion: '1' };
    const id = await project({ provider: 'bedrock', model: 'amazon.nova-lite-v1:0', credentialId: cred.id, providerOptions: { guardrailConfig } });
    bedrock.script({ text: 'Hello from Bedrock' });
    expect((await ask(id)).choices[0]?.message.content).toBe('Hello from Bedrock');
    expect(bedrock.lastRequest()).toMatchObject({ operation: 'converse-stream', modelId: 'amazon.nova-lite-v1:0', body: { guardrailConfig } });
    expect(String(bedrock.lastRequest()?.headers.authorization)).toContain(`Credential=${AWS.accessKeyId}/`);
  });

  it('refuses an option Bedrock does not take, and a call without a credential names what it needs (no AWS environment is read)', async () => {
    const bad = await s.call('POST', '/api/projects/create', { body: { name: 'x', provider: 'bedrock', model: 'm', providerOptions: { messages: [] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('"messages" is not an option of provider bedrock (it takes guardrailConfig, reasoningConfig');
    const none = await client.chat.completions
      .create({ model: 'amazon.nova-lite-v1:0', messages: [{ role: 'user', content: 'hi' }], provider: 'bedrock' } as never, { headers: { authorization: `Bearer ${s.keyB}` } })
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(none?.status).toBe(400);
    expect(none?.message).toContain('Provider bedrock needs a credential of yours');
  });
});

describe("openai's Responses API", () => {
  it("answers through POST /responses when the project's options say api: responses; api is never sent", async () => {
    const cred = await credential({ provider: 'openai', apiKey: 'sk-responses-0003', baseUrl: responses.url, default: false });
    const id = await project({ provider: 'openai', model: 'gpt-4o-mini', credentialId: cred.id, providerOptions: { api: 'responses' } });
    responses.script({ text: 'Hello from Responses' });
    expect((await ask(id)).choices[0]?.message.content).toBe('Hello from Responses');
    expect(responses.lastRequest()).toMatchObject({ path: '/v1/responses', body: { model: 'gpt-4o-mini' } });
    expect(responses.lastRequest()?.raw).not.toContain('"api"');
  });
});
