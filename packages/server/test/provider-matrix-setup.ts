import OpenAI from 'openai';
import { expect } from 'vitest';
import { startFakeAnthropicServer } from '../../adapters-models/test/fakes/anthropic-server.js';
import { startFakeAzureServer } from '../../adapters-models/test/fakes/azure-server.js';
import { startFakeBedrockServer } from '../../adapters-models/test/fakes/bedrock-server.js';
import { startFakeGoogleServer } from '../../adapters-models/test/fakes/google-server.js';
import { startFakeResponsesServer } from '../../adapters-models/test/fakes/responses-server.js';
import { startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// The provider matrix's plumbing (provider-matrix.test.ts): one loopback fake per provider
// behind one shape, the built server, server-everything over streamable HTTP, and per provider
// a credential and a project with a document, a JavaScript tool and the MCP server.

/** What every fake takes as a reply: text, or tool calls (in parallel when several). */
export interface Reply {
  readonly text?: string;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string }[];
}
/** A fake as the matrix sees it: its recorded request bodies and its script. */
export interface Fake {
  readonly requests: readonly { readonly body: Record<string, unknown> }[];
  script(...replies: Reply[]): void;
  reset(): void;
  close(): Promise<void>;
}
export interface Row {
  readonly name: string;
  /** The credential's body (provider, keys, base URL or endpoint). */
  readonly credential: () => Record<string, unknown>;
  /** The project's provider, model and provider options. */
  readonly project: Record<string, unknown>;
  readonly fake: () => Fake;
  /** A part the image of a user message must be in the provider's request as (searched anywhere in the body). */
  readonly image: (base64: string) => Record<string, unknown>;
  /**
   * How the model gives a json_schema answer. Default: as its text. Bedrock (a model without
   * native structured output) is offered a tool named `json` beside the agent's, with
   * `toolChoice: any`, and answers by calling it (the AI SDK turns that call into the text).
   */
  readonly json?: (text: string) => Reply;
  /** The fake's own scripted answer of a 429 asking to retry after 1 s (its provider's form), and the `Retry-After` the caller gets. */
  readonly rateLimited: Record<string, unknown>;
  readonly retryAfter: string | null;
  /** The row's credential with a key the fake refuses (in the provider's form: 401, Gemini's 400 API_KEY_INVALID, a SigV4 signature AWS refuses). */
  readonly badKey: () => Record<string, unknown>;
  /** A model the fake does not serve. */
  readonly unknownModel: string;
  /** What a `json_object` response_format is in the provider's request (searched anywhere in the body): its JSON mode, or a forced `json` tool. */
  readonly jsonMode: Record<string, unknown>;
  /** How the model gives a json_object answer. Default: as `json` says. */
  readonly jsonObject?: (text: string) => Reply;
}

/** A real 1x1 PNG. */
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const DOCUMENT = '# Refunds\n\nACME refunds purchases within 30 days of delivery.';
export const SUM_TOOL = {
  name: 'sum',
  description: 'Adds two numbers',
  language: 'javascript',
  code: 'async function main(args) { return "sum=" + (args.a + args.b); }',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
};
const AWS = { accessKeyId: 'AKIAFAKEKEYID0000009', secretAccessKey: 'aws-secret-matrix-0009' };
/** The secret of every row's refused credential: never in an answer. */
export const BAD_KEY = 'bad-key-NEVER-SHOWN-0042';
/** Every fake's context window (the fake's rough tokens; Anthropic's 100,000 characters, Bedrock's 8,192 tokens): `TOO_LONG` is past all. */
const CONTEXT_TOKENS = 20_000;
export const TOO_LONG = 'word '.repeat(30_000);

let s: TestServer;
let client: OpenAI;
let everything: ServerProcess;
const fakes = new Map<string, Fake>();
const fake = (name: string) => () => fakes.get(name) as Fake;
const url = (name: string) => (fakes.get(name) as unknown as { url: string }).url;

export const ROWS: readonly Row[] = [
  {
    name: 'openai chat completions',
    credential: () => ({ provider: 'openai', apiKey: 'sk-matrix-chat', baseUrl: url('openai') }),
    project: { provider: 'openai', model: 'gpt-4o-mini' },
    fake: fake('openai'),
    image: (data) => ({ type: 'image_url', image_url: expect.objectContaining({ url: `data:image/png;base64,${data}` }) }),
    rateLimited: { status: 429, errorHeaders: { 'retry-after': '1' } },
    retryAfter: '1',
    badKey: () => ({ provider: 'openai', apiKey: BAD_KEY, baseUrl: url('openai') }),
    unknownModel: 'gpt-nope',
    jsonMode: { response_format: { type: 'json_object' } },
  },
  {
    name: 'openai responses',
    credential: () => ({ provider: 'openai', apiKey: 'sk-matrix-responses', baseUrl: url('responses') }),
    project: { provider: 'openai', model: 'gpt-4o-mini', providerOptions: { api: 'responses' } },
    fake: fake('responses'),
    image: (data) => ({ type: 'input_image', image_url: `data:image/png;base64,${data}` }),
    rateLimited: { status: 429, retryAfterSeconds: 1 },
    retryAfter: '1',
    badKey: () => ({ provider: 'openai', apiKey: BAD_KEY, baseUrl: url('responses') }),
    unknownModel: 'gpt-nope',
    jsonMode: { format: { type: 'json_object' } },
  },
  {
    name: 'anthropic',
    credential: () => ({ provider: 'anthropic', apiKey: 'sk-ant-matrix', baseUrl: url('anthropic') }),
    project: { provider: 'anthropic', model: 'claude-test' },
    fake: fake('anthropic'),
    image: (data) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }),
    rateLimited: { status: 429, retryAfter: '1' },
    retryAfter: '1',
    badKey: () => ({ provider: 'anthropic', apiKey: BAD_KEY, baseUrl: url('anthropic') }),
    unknownModel: 'claude-nope',
    // Without a schema the AI SDK offers a `json` tool and forces a tool call; the model answers by calling it.
    jsonMode: { tool_choice: { type: 'any', disable_parallel_tool_use: true } },
    jsonObject: (text) => ({ toolCalls: [{ name: 'json', arguments: text }] }),
  },
  {
    name: 'google',
    credential: () => ({ provider: 'google', apiKey: 'gemini-matrix', baseUrl: url('google') }),
    project: { provider: 'google', model: 'gemini-2.5-flash' },
    fake: fake('google'),
    image: (data) => ({ inlineData: { mimeType: 'image/png', data } }),
    // Gemini says when to retry in the body (RetryInfo.retryDelay), not in a header.
    rateLimited: { status: 429, retryDelay: '1s' },
    retryAfter: '1',
    badKey: () => ({ provider: 'google', apiKey: BAD_KEY, baseUrl: url('google') }),
    unknownModel: 'gemini-nope',
    jsonMode: { responseMimeType: 'application/json' },
  },
  {
    name: 'bedrock',
    credential: () => ({ provider: 'bedrock', region: 'eu-west-1', ...AWS, baseUrl: url('bedrock') }),
    project: { provider: 'bedrock', model: 'amazon.nova-lite-v1:0' },
    fake: fake('bedrock'),
    image: (data) => ({ image: { format: 'png', source: { bytes: data } } }),
    json: (text) => ({ toolCalls: [{ name: 'json', arguments: text }] }),
    // Bedrock's ThrottlingException says no wait.
    rateLimited: { status: 429 },
    retryAfter: null,
    badKey: () => ({ provider: 'bedrock', region: 'eu-west-1', accessKeyId: AWS.accessKeyId, secretAccessKey: BAD_KEY, baseUrl: url('bedrock') }),
    unknownModel: 'amazon.nope-v1:0',
    jsonMode: { toolChoice: { any: {} } },
  },
  {
    name: 'azure',
    credential: () => ({ provider: 'azure', apiKey: 'azure-matrix', endpoint: (fakes.get('azure') as unknown as { endpoint: string }).endpoint, deployments: { 'my-gpt': 'gpt-4o-mini' } }),
    project: { provider: 'azure', model: 'my-gpt' },
    fake: fake('azure'),
    image: (data) => ({ type: 'image_url', image_url: expect.objectContaining({ url: `data:image/png;base64,${data}` }) }),
    rateLimited: { status: 429, retryAfter: { seconds: 1 } },
    retryAfter: '1',
    badKey: () => ({ provider: 'azure', apiKey: BAD_KEY, endpoint: (fakes.get('azure') as unknown as { endpoint: string }).endpoint, deployments: { 'my-gpt': 'gpt-4o-mini' } }),
    unknownModel: 'gpt-nope',
    jsonMode: { response_format: { type: 'json_object' } },
  },
];

export interface Matrix {
  readonly s: TestServer;
  readonly client: OpenAI;
  /** The project of each row, by row name. */
  readonly projects: ReadonlyMap<string, string>;
  /** Per row: a bare project (the model alone) on its credential, one on a refused credential, one of a model the fake does not serve. */
  readonly bare: ReadonlyMap<string, { plain: string; badKey: string; badKeyCredential: string; unknownModel: string }>;
}

export async function startMatrix(): Promise<Matrix> {
  const started = await Promise.all([
    startFakeChatServer({ apiKey: 'sk-matrix-chat', models: ['gpt-4o-mini'], contextTokens: CONTEXT_TOKENS }),
    startFakeResponsesServer({ apiKey: 'sk-matrix-responses', models: ['gpt-4o-mini'], contextTokens: CONTEXT_TOKENS }),
    startFakeAnthropicServer({ apiKey: 'sk-ant-matrix', models: ['claude-test'] }),
    startFakeGoogleServer({ apiKey: 'gemini-matrix', models: ['gemini-2.5-flash'], inputTokenLimit: CONTEXT_TOKENS }),
    startFakeBedrockServer({ credentials: AWS, region: 'eu-west-1' }),
    startFakeAzureServer({ apiKey: 'azure-matrix', contextTokens: CONTEXT_TOKENS }),
    startEverything('streamableHttp'),
  ]);
  everything = started[6];
  for (const [i, name] of ['openai', 'responses', 'anthropic', 'google', 'bedrock', 'azure'].entries()) fakes.set(name, started[i] as unknown as Fake);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  const projects = new Map<string, string>();
  const bare = new Map<string, { plain: string; badKey: string; badKeyCredential: string; unknownModel: string }>();
  for (const row of ROWS) {
    const { project, credential } = await agentOf(row);
    projects.set(row.name, project);
    const badKeyCredential = (await created('/api/v1/credentials', { name: `${row.name} refused`, default: false, ...row.badKey() })).credential.id;
    const bareProject = async (model: unknown, credentialId: string) => (await created('/api/projects/create', { name: row.name, ...row.project, model, credentialId })).project.id as string;
    bare.set(row.name, {
      plain: await bareProject(row.project.model, credential),
      badKey: await bareProject(row.project.model, badKeyCredential),
      badKeyCredential,
      unknownModel: await bareProject(row.unknownModel, credential),
    });
  }
  return { s, client, projects, bare };
}

export async function stopMatrix(): Promise<void> {
  await s?.stop();
  await Promise.all([...[...fakes.values()].map((f) => f.close()), everything?.stop()]);
}

const created = async (path: string, body: Record<string, unknown>) => {
  const res = await s.call('POST', path, { body });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201);
  return res.body;
};

/** A row's project: its credential, a document, the JavaScript tool and server-everything. */
async function agentOf(row: Row): Promise<{ project: string; credential: string }> {
  const credential = (await created('/api/v1/credentials', { name: row.name, default: false, ...row.credential() })).credential.id;
  const projectId = (await created('/api/projects/create', { name: row.name, ...row.project, credentialId: credential })).project.id;
  const doc = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: DOCUMENT } });
  await s.indexed(doc.body.documentId);
  await created('/api/tools/create', { projectId, ...SUM_TOOL });
  await created('/api/mcp/add-server', { projectId, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp` });
  return { project: projectId, credential };
}

/** Every object nested in a value (the value itself included). */
export function objectsIn(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(objectsIn);
  if (typeof value !== 'object' || value === null) return [];
  return [value as Record<string, unknown>, ...Object.values(value).flatMap(objectsIn)];
}
