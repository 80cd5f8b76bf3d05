import type { ScriptedChatReply } from '@agent-platform/core/testing';
import { type ApiError, contextProblem, echo, invalid, isObject, pieces, randomId, scriptedError, sleep, tokens, validate, words } from '../openai-chat-server.js';
import { type Exchange, replyQueue, type ScriptedFake, startExchangeServer, writeEvents } from './exchange.js';

/**
 * A loopback Azure OpenAI resource (`https://{resource}.openai.azure.com`), speaking the data
 * plane's chat completions as the 2024-10-21 GA inference spec (Azure/azure-rest-api-specs,
 * `specification/cognitiveservices/data-plane/AzureOpenAI/inference/stable/2024-10-21`) and the
 * service's observed answers describe them:
 *
 * - `POST /openai/deployments/{deployment-id}/chat/completions?api-version=…` with the key in the
 *   `api-key` header. No `api-version`: 404 `{ error: { code: '404', message: 'Resource not found' } }`;
 *   one the service does not know: 400 `BadRequest` "API version not supported"; a wrong or
 *   missing key: 401 (code `'401'`, "Access denied due to invalid subscription key…"); a
 *   deployment the resource lacks: 404 `DeploymentNotFound`.
 * - The body is OpenAI's (checked by the OpenAI fake's `validate`, plus Azure's `data_sources`);
 *   `stream_options` only from API version 2024-09-01(-preview) on, as Azure added it then.
 * - The stream is OpenAI's chunks with Azure's additions: a first chunk with `choices: []`, empty
 *   `id`/`model`/`object` and `prompt_filter_results`, `content_filter_results` on each choice, the
 *   deployment's model version as `model`, usage (with `prompt_tokens_details.cached_tokens` and
 *   `completion_tokens_details.reasoning_tokens`) in a last chunk when asked, then `[DONE]`.
 * - A filtered prompt is 400 `{ error: { code: 'content_filter', status: 400, param: 'prompt',
 *   innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result } } }`; a filtered
 *   answer ends with `finish_reason: 'content_filter'` and the category marked `filtered`.
 * - 429 answers carry `retry-after` and `retry-after-ms`; a prompt over `contextTokens` is 400
 *   `context_length_exceeded`.
 * - `GET /openai/models?api-version=…` lists the base models (`{ object: 'list', data: [{ id, capabilities, … }] }`).
 */

export type FilterCategory = 'hate' | 'sexual' | 'violence' | 'self_harm';

export interface AzureScriptedReply extends ScriptedChatReply {
  /** Refuse the prompt (400 content_filter) for this category, or `jailbreak`. */
  readonly promptFilter?: FilterCategory | 'jailbreak';
  /** With `finishReason: 'content_filter'`: the category marked filtered in the last chunk. Default `violence`. */
  readonly outputFilter?: FilterCategory;
  /** For a 429: the wait. Default 2 s, sent as both `retry-after` and `retry-after-ms`; `msHeader: false` sends only `retry-after`. */
  readonly retryAfter?: { readonly seconds: number; readonly msHeader?: boolean };
  /** Wait this long before the headers. */
  readonly delayMs?: number;
  /** Never answer. */
  readonly hang?: boolean;
  /** Send this many events, then destroy the socket. */
  readonly dropAfterChunks?: number;
}

export interface FakeAzureServerOptions {
  /** The `api-key` it takes. Default `azure-test-key`. */
  readonly apiKey?: string;
  /** Deployment name → model version (the `model` of its answers). Default `{ 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18', 'gpt-4o': 'gpt-4o-2024-08-06' }`. */
  readonly deployments?: Readonly<Record<string, string>>;
  /** The deployments' context window in the fake's rough tokens. Default unlimited. */
  readonly contextTokens?: number;
}

export interface FakeAzureServer extends ScriptedFake<AzureScriptedReply> {
  /** `http://127.0.0.1:<port>`: what `https://{resource}.openai.azure.com` is for a real resource. */
  readonly endpoint: string;
}

const STABLE_VERSIONS = ['2022-12-01', '2023-05-15', '2024-02-01', '2024-06-01', '2024-10-21'];
const known = (version: string) => STABLE_VERSIONS.includes(version) || /^20(2[3-9])-\d\d-\d\d-preview$/.test(version);
/** Azure took `stream_options` from these versions on. */
const hasStreamOptions = (version: string) => version.slice(0, 10) >= '2024-09-01';

const SAFE = { filtered: false, severity: 'safe' };
const filterResults = (filtered?: string) => Object.fromEntries(['hate', 'self_harm', 'sexual', 'violence'].map((name) => [name, name === filtered ? { filtered: true, severity: 'high' } : SAFE]));
const promptResults = (filtered?: string) => ({ ...filterResults(filtered), jailbreak: { filtered: filtered === 'jailbreak', detected: filtered === 'jailbreak' } });

const azureError = (status: number, code: string, message: string): ApiError => ({ status, code, message, type: '', param: null });

function send(exchange: Exchange, error: ApiError, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}): void {
  // Azure's own errors are `{ code, message }`; those passed through from the model carry OpenAI's type and param too.
  const body = error.type === '' ? { code: error.code, message: error.message, ...extra } : { message: error.message, type: error.type, param: error.param, code: error.code, ...extra };
  exchange.json(error.status, { error: body }, headers);
}

export async function startFakeAzureServer(options: FakeAzureServerOptions = {}): Promise<FakeAzureServer> {
  const apiKey = options.apiKey ?? 'azure-test-key';
  const deployments = options.deployments ?? { 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18', 'gpt-4o': 'gpt-4o-2024-08-06' };
  const replies = replyQueue<AzureScriptedReply>();

  const failWith = (exchange: Exchange, reply: AzureScriptedReply, status: number, version: string) => {
    if (status === 401) return send(exchange, azureError(401, '401', ACCESS_DENIED));
    if (status === 404) return send(exchange, azureError(404, 'DeploymentNotFound', NO_DEPLOYMENT));
    if (status === 429) {
      const wait = reply.retryAfter ?? { seconds: 2 };
      const headers: Record<string, string> = { 'retry-after': String(wait.seconds), ...(wait.msHeader === false ? {} : { 'retry-after-ms': String(wait.seconds * 1000) }) };
      return send(exchange, azureError(429, '429', rateLimited(version, wait.seconds)), headers);
    }
    return send(exchange, scriptedError(status, undefined));
  };

  const chat = async (exchange: Exchange, deployment: string, version: string) => {
    const body = exchange.record.body;
    const { data_sources: _sources, ...openaiBody } = body;
    const problem =
      (exchange.record.malformed ? invalid('We could not parse the JSON body of your request.') : undefined) ??
      validate({ model: deployment, ...openaiBody }, undefined) ??
      (body.stream_options !== undefined && !hasStreamOptions(version) ? invalid('Unrecognized request argument supplied: stream_options') : undefined) ??
      contextProblem(body, options.contextTokens);
    if (problem) return send(exchange, problem);
    const reply: AzureScriptedReply = replies.next() ?? { text: echo(body).text ?? '' };
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.hang || exchange.closed()) return;
    if (reply.status !== undefined) return failWith(exchange, reply, reply.status, version);
    if (reply.promptFilter) {
      const error = { ...invalid(PROMPT_FILTERED, 'prompt', 'content_filter'), type: null as unknown as string };
      return exchange.json(400, {
        error: { ...error, status: 400, innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: promptResults(reply.promptFilter) } },
      });
    }
    const id = randomId('chatcmpl-', 29);
    const created = Math.floor(Date.now() / 1000);
    const model = deployments[deployment] as string;
    const calls = (reply.toolCalls ?? []).map((c) => ({ id: randomId('call_'), name: c.name, arguments: c.arguments }));
    const finish = reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    const text = reply.text ?? '';
    const base = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_azure0001' };
    const choice = (delta: Record<string, unknown>, finishReason: string | null = null, filters: Record<string, unknown> = filterResults()) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null, content_filter_results: filters }],
    });
    const messages = body.messages as Record<string, unknown>[];
    const promptTokens = reply.usage?.promptTokens ?? messages.reduce((sum, m) => sum + 4 + tokens(JSON.stringify(m.content ?? '')), 0);
    const completionTokens = reply.usage?.completionTokens ?? tokens(text) + calls.reduce((sum, c) => sum + tokens(c.arguments), 0);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: reply.usage?.totalTokens ?? promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: reply.usage?.cachedPromptTokens ?? 0 },
      completion_tokens_details: { reasoning_tokens: reply.usage?.reasoningTokens ?? 0 },
    };
    if (body.stream !== true) {
      const message = {
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
      };
      return exchange.json(200, {
        ...base,
        object: 'chat.completion',
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: promptResults() }],
        choices: [{ index: 0, message, finish_reason: finish, logprobs: null, content_filter_results: filterResults(finish === 'content_filter' ? (reply.outputFilter ?? 'violence') : undefined) }],
        usage,
      });
    }
    const chunks: unknown[] = [
      { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: promptResults() }] },
      choice({ role: 'assistant', content: '', refusal: null }, null, {}),
      ...words(text).map((piece) => choice({ content: piece })),
    ];
    calls.forEach((call, index) => {
      chunks.push(choice({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null, {}));
      for (const part of pieces(call.arguments)) chunks.push(choice({ tool_calls: [{ index, function: { arguments: part } }] }, null, {}));
    });
    chunks.push(choice({}, finish, finish === 'content_filter' ? filterResults(reply.outputFilter ?? 'violence') : {}));
    if (isObject(body.stream_options) && body.stream_options.include_usage === true) chunks.push({ ...base, choices: [], usage });
    exchange.startStream({ 'apim-request-id': randomId('', 32) });
    const records = [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n'];
    await writeEvents(exchange, records, { ...(reply.chunkDelayMs ? { delayMs: reply.chunkDelayMs } : {}), ...(reply.dropAfterChunks !== undefined ? { dropAfter: reply.dropAfterChunks } : {}) });
  };

  const loopback = await startExchangeServer(async (exchange) => {
    const { record } = exchange;
    const version = record.query.get('api-version');
    const deployment = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(record.path)?.[1];
    const route = deployment !== undefined ? 'chat' : record.path === '/openai/models' ? 'models' : undefined;
    if (!route || !version) return send(exchange, azureError(404, '404', 'Resource not found'));
    if (!known(version)) return send(exchange, azureError(400, 'BadRequest', 'API version not supported'));
    if (record.headers['api-key'] !== apiKey) return send(exchange, azureError(401, '401', ACCESS_DENIED));
    if (route === 'models') {
      if (record.method !== 'GET') return send(exchange, azureError(405, '405', 'Method not allowed'));
      const models = [...new Set(Object.values(deployments))];
      return exchange.json(200, {
        object: 'list',
        data: models.map((id) => ({
          id,
          object: 'model',
          status: 'succeeded',
          created_at: 1_720_000_000,
          capabilities: { chat_completion: true, completion: false, embeddings: false, fine_tune: false, inference: true },
          lifecycle_status: 'generally-available',
        })),
      });
    }
    const name = decodeURIComponent(deployment as string);
    if (record.method !== 'POST') return send(exchange, azureError(405, '405', 'Method not allowed'));
    if (!(name in deployments)) return send(exchange, azureError(404, 'DeploymentNotFound', NO_DEPLOYMENT));
    await chat(exchange, name, version);
  });

  return {
    endpoint: loopback.origin,
    ...replies.controls(loopback),
  };
}

const ACCESS_DENIED =
  'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.';
const NO_DEPLOYMENT = 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.';
const PROMPT_FILTERED =
  "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766";
const rateLimited = (version: string, seconds: number) =>
  `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version ${version} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${seconds} seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit.`;
