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
  },
  {
    name: 'openai responses',
    credential: () => ({ provider: 'openai', apiKey: 'sk-matrix-responses', baseUrl: url('responses') }),
    project: { provider: 'openai', model: 'gpt-4o-mini', providerOptions: { api: 'responses' } },
    fake: fake('responses'),
    image: (data) => ({ type: 'input_image', image_url: `data:image/png;base64,${data}` }),
  },
  {
    name: 'anthropic',
    credential: () => ({ provider: 'anthropic', apiKey: 'sk-ant-matrix', baseUrl: url('anthropic') }),
    project: { provider: 'anthropic', model: 'claude-test' },
    fake: fake('anthropic'),
    image: (data) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }),
  },
  {
    name: 'google',
    credential: () => ({ provider: 'google', apiKey: 'gemini-matrix', baseUrl: url('google') }),
    project: { provider: 'google', model: 'gemini-2.5-flash' },
    fake: fake('google'),
    image: (data) => ({ inlineData: { mimeType: 'image/png', data } }),
  },
  {
    name: 'bedrock',
    credential: () => ({ provider: 'bedrock', region: 'eu-west-1', ...AWS, baseUrl: url('bedrock') }),
    project: { provider: 'bedrock', model: 'amazon.nova-lite-v1:0' },
    fake: fake('bedrock'),
    image: (data) => ({ image: { format: 'png', source: { bytes: data } } }),
    json: (text) => ({ toolCalls: [{ name: 'json', arguments: text }] }),
  },
  {
    name: 'azure',
    credential: () => ({ provider: 'azure', apiKey: 'azure-matrix', endpoint: (fakes.get('azure') as unknown as { endpoint: string }).endpoint, deployments: { 'my-gpt': 'gpt-4o-mini' } }),
    project: { provider: 'azure', model: 'my-gpt' },
    fake: fake('azure'),
    image: (data) => ({ type: 'image_url', image_url: expect.objectContaining({ url: `data:image/png;base64,${data}` }) }),
  },
];

export interface Matrix {
  readonly s: TestServer;
  readonly client: OpenAI;
  /** The project of each row, by row name. */
  readonly projects: ReadonlyMap<string, string>;
}

export async function startMatrix(): Promise<Matrix> {
  const started = await Promise.all([
    startFakeChatServer({ apiKey: 'sk-matrix-chat' }),
    startFakeResponsesServer({ apiKey: 'sk-matrix-responses' }),
    startFakeAnthropicServer({ apiKey: 'sk-ant-matrix', models: ['claude-test'] }),
    startFakeGoogleServer({ apiKey: 'gemini-matrix' }),
    startFakeBedrockServer({ credentials: AWS, region: 'eu-west-1' }),
    startFakeAzureServer({ apiKey: 'azure-matrix' }),
    startEverything('streamableHttp'),
  ]);
  everything = started[6];
  for (const [i, name] of ['openai', 'responses', 'anthropic', 'google', 'bedrock', 'azure'].entries()) fakes.set(name, started[i] as unknown as Fake);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  const projects = new Map<string, string>();
  for (const row of ROWS) projects.set(row.name, await agentOf(row));
  return { s, client, projects };
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
async function agentOf(row: Row): Promise<string> {
  const credential = (await created('/api/v1/credentials', { name: row.name, default: false, ...row.credential() })).credential.id;
  const projectId = (await created('/api/projects/create', { name: row.name, ...row.project, credentialId: credential })).project.id;
  const doc = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: DOCUMENT } });
  await s.indexed(doc.body.documentId);
  await created('/api/tools/create', { projectId, ...SUM_TOOL });
  await created('/api/mcp/add-server', { projectId, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp` });
  return projectId;
}

/** Every object nested in a value (the value itself included). */
export function objectsIn(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(objectsIn);
  if (typeof value !== 'object' || value === null) return [];
  return [value as Record<string, unknown>, ...Object.values(value).flatMap(objectsIn)];
}
