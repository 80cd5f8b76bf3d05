import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { signThinking } from './anthropic-validate.js';
import { checkConverse, type FakeGuardrail, guardrailOf } from './bedrock-converse.js';
import { encodeEvent, encodeException } from './eventstream.js';
import { startLoopback, watchExchange } from './loopback.js';
import { type AwsCredentials, type AwsError, verifySigV4 } from './sigv4.js';

/**
 * A loopback stand-in for Amazon Bedrock: the runtime's `POST /model/{modelId}/converse` and
 * `POST /model/{modelId}/converse-stream`, and the control plane's `GET /foundation-models`, with
 * answers a test scripts. Node built-ins only.
 *
 * - Every request's SigV4 signature is checked (`sigv4.ts`: scope `<date>/<region>/bedrock/aws4_request`,
 *   `x-amz-date`, `x-amz-security-token` with temporary credentials), then the body
 *   (`bedrock-converse.ts`). Errors are AWS's: the status, `x-amzn-errortype: <Type>:<namespace>`
 *   and `{"message": ...}` (403 `UnrecognizedClientException` / `InvalidSignatureException`,
 *   400 `ValidationException` incl. "The provided model identifier is invalid." and "Input is
 *   too long for requested model.", 429 `ThrottlingException`, ...).
 * - ConverseStream answers `application/vnd.amazon.eventstream` (`eventstream.ts`) in the
 *   service's order: `messageStart`; a reasoning block (`reasoningContent` text deltas, then its
 *   signature: an HMAC of the text, checked when the block comes back, as Claude's thinking
 *   blocks are; with thinking on, a last assistant message with tool use must start with one); a text block (no `contentBlockStart` for text, as Bedrock sends none) of word
 *   deltas; each tool call as `contentBlockStart` (`toolUse {toolUseId, name}`), its input in
 *   pieces, `contentBlockStop`; `messageStop {stopReason}`; `metadata {usage, metrics}`. Every
 *   payload carries the random `p` padding field the service adds.
 * - A guardrail named in `guardrailConfig` that blocks the input answers its blocked-input text
 *   with stop reason `guardrail_intervened` (and, with `trace: enabled`, `metadata.trace.guardrail`).
 * - Replies come from `script()`'s queue, else the default `You said: <last user text>`.
 */

export type BedrockStopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'guardrail_intervened' | 'content_filtered';

export interface BedrockScriptedReply {
  /** The answer's text, streamed word by word. */
  readonly text?: string;
  /** Reasoning text, streamed before the answer as `reasoningContent` deltas in its own block. */
  readonly reasoning?: string;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string | Record<string, unknown>; readonly id?: string }[];
  /** Ours (`stop` → `end_turn`, `length` → `max_tokens`, `tool_calls` → `tool_use`, `content_filter` → `content_filtered`). */
  readonly finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** Bedrock's own, overriding `finishReason`. */
  readonly stopReason?: BedrockStopReason;
  /** Default: counted. `null`: no metadata event. */
  readonly usage?: {
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly totalTokens?: number;
    readonly cacheReadInputTokens?: number;
    readonly cacheWriteInputTokens?: number;
  } | null;
  /** Answer this status with AWS's error instead (the type follows from it unless `errorType` says). */
  readonly status?: number;
  readonly errorType?: string;
  readonly errorMessage?: string;
  /** After `afterEvents` events, an exception frame (`throttlingException`, `validationException`, `modelStreamErrorException`, ...), then the end. */
  readonly exception?: { readonly type: string; readonly message?: string; readonly afterEvents?: number };
  readonly delayMs?: number;
  readonly chunkDelayMs?: number;
  /** Never answer. */
  readonly hang?: boolean;
  /** Send this many events, then nothing more (the connection stays open). */
  readonly stallAfterEvents?: number;
  /** Send this many events, then destroy the socket. */
  readonly dropAfterEvents?: number;
  /** Flip a bit of this event's message CRC (0-based). */
  readonly corruptEvent?: number;
}

export interface RecordedBedrockRequest {
  readonly method: string;
  readonly path: string;
  /** `converse`, `converse-stream`, `foundation-models`, or `unknown`. */
  readonly operation: string;
  /** The model id of the path, decoded. */
  readonly modelId: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly body: Record<string, unknown>;
  status: number;
  errorType?: string;
  readonly ended: Promise<'completed' | 'client_closed'>;
}

export interface FakeBedrockOptions {
  readonly credentials: AwsCredentials;
  /** Default `us-east-1`. */
  readonly region?: string;
  /** The model ids served; others answer "The provided model identifier is invalid." Default: `FAKE_BEDROCK_MODELS`. */
  readonly models?: readonly string[];
  /** Models refusing images. Default `meta.llama3-1-8b-instruct-v1:0`. */
  readonly textOnlyModels?: readonly string[];
  /** Default: `gr-test` version `1`, blocking `forbidden`. */
  readonly guardrails?: readonly FakeGuardrail[];
  /** A prompt past this many tokens (4 characters each) is "Input is too long for requested model." Default 8192. */
  readonly maxInputTokens?: number;
}

export const FAKE_BEDROCK_MODELS = ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'us.anthropic.claude-sonnet-4-20250514-v1:0', 'amazon.nova-lite-v1:0', 'meta.llama3-1-8b-instruct-v1:0'];

export interface FakeBedrockServer {
  /** `http://127.0.0.1:<port>`: the runtime's and the control plane's base URL. */
  readonly url: string;
  readonly requests: RecordedBedrockRequest[];
  script(...replies: BedrockScriptedReply[]): void;
  lastRequest(): RecordedBedrockRequest | undefined;
  reset(): void;
  close(): Promise<void>;
}

const NAMESPACE: Record<string, string> = {
  UnrecognizedClientException: 'http://internal.amazon.com/coral/com.amazon.coral.service/',
  InvalidSignatureException: 'http://internal.amazon.com/coral/com.amazon.coral.service/',
  IncompleteSignatureException: 'http://internal.amazon.com/coral/com.amazon.coral.service/',
  MissingAuthenticationTokenException: 'http://internal.amazon.com/coral/com.amazon.coral.service/',
};
/** The error type and text Bedrock answers with a status. */
const BY_STATUS: Record<number, [string, string]> = {
  400: ['ValidationException', 'Malformed input request, please reformat your input and try again.'],
  403: ['AccessDeniedException', "You don't have access to the model with the specified model ID."],
  404: ['ResourceNotFoundException', 'Could not resolve the foundation model from the provided model identifier.'],
  408: ['ModelTimeoutException', 'Model has timed out in processing the request. Try your request again.'],
  424: ['ModelErrorException', 'The model returned an error.'],
  429: ['ThrottlingException', 'Too many requests, please wait before trying again.'],
  500: ['InternalServerException', 'The system encountered an unexpected error during processing. Try your request again.'],
  503: ['ServiceUnavailableException', 'Bedrock is unable to process your request.'],
};
const STOP: Record<string, BedrockStopReason> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'content_filtered' };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const words = (text: string): string[] => text.match(/\S+\s*/g) ?? [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The `p` field Bedrock pads every event with (random letters, so that sizes do not reveal content). */
const padding = (): string =>
  randomBytes(8 + Math.floor(Math.random() * 24))
    .toString('base64')
    .replace(/[^a-zA-Z0-9]/g, 'x');
const toolUseId = (): string => `tooluse_${randomBytes(16).toString('base64url').slice(0, 22)}`;

function textsOf(body: Record<string, unknown>): { all: string; lastUser: string; lastToolResult?: { name: string; content: string } } {
  const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const names = new Map<string, string>();
  let all = Array.isArray(body.system) ? body.system.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : '')).join(' ') : '';
  let lastUser = '';
  let lastToolResult: { name: string; content: string } | undefined;
  for (const message of messages) {
    for (const block of Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : []) {
      if (typeof block.text === 'string') all += ` ${block.text}`;
      if (isObject(block.toolUse)) names.set(String(block.toolUse.toolUseId), String(block.toolUse.name));
      if (isObject(block.toolResult)) {
        const content = (block.toolResult.content as Record<string, unknown>[]).map((c) => (typeof c.text === 'string' ? c.text : JSON.stringify(c.json))).join('');
        all += ` ${content}`;
        lastToolResult = { name: names.get(String(block.toolResult.toolUseId)) ?? 'unknown', content };
      }
    }
    if (message.role === 'user') {
      const text = (message.content as Record<string, unknown>[]).flatMap((b) => (typeof b.text === 'string' ? [b.text] : [])).join(' ');
      if (text) {
        lastUser = text;
        lastToolResult = undefined;
      }
    }
  }
  return lastToolResult ? { all, lastUser, lastToolResult } : { all, lastUser };
}

/**
 * The tool a request forces, if it forces one: the one `toolChoice: { tool: { name } }` names; with
 * `{ any: {} }` the model picks, and the fake picks as a model asked for a structured answer does:
 * the AI SDK's `json` answer tool when it is offered, else the first tool.
 */
function forcedTool(config: unknown): string | undefined {
  if (!isObject(config) || !isObject(config.toolChoice) || !Array.isArray(config.tools)) return undefined;
  const choice = config.toolChoice;
  if (isObject(choice.tool) && typeof choice.tool.name === 'string') return choice.tool.name;
  if (!isObject(choice.any)) return undefined;
  const names = config.tools.flatMap((tool) => (isObject(tool) && isObject(tool.toolSpec) && typeof tool.toolSpec.name === 'string' ? [tool.toolSpec.name] : []));
  return names.includes('json') ? 'json' : names[0];
}

/** Starts the fake on 127.0.0.1 (a free port). */
export async function startFakeBedrockServer(options: FakeBedrockOptions): Promise<FakeBedrockServer> {
  const region = options.region ?? 'us-east-1';
  const models = options.models ?? FAKE_BEDROCK_MODELS;
  const textOnly = options.textOnlyModels ?? ['meta.llama3-1-8b-instruct-v1:0'];
  const guardrails = options.guardrails ?? [{ identifier: 'gr-test', version: '1', blockedWords: ['forbidden'], blockedInputMessage: 'Sorry, the model cannot answer this question.' }];
  const maxInputTokens = options.maxInputTokens ?? 8192;
  const requests: RecordedBedrockRequest[] = [];
  let queue: BedrockScriptedReply[] = [];

  const sendError = (res: ServerResponse, record: RecordedBedrockRequest, error: AwsError, headers: Record<string, string> = {}) => {
    record.status = error.status;
    record.errorType = error.type;
    res.writeHead(error.status, {
      'content-type': 'application/json',
      'x-amzn-requestid': randomUUID(),
      'x-amzn-errortype': `${error.type}:${NAMESPACE[error.type] ?? 'http://internal.amazon.com/coral/com.amazon.bedrock/'}`,
      ...headers,
    });
    res.end(JSON.stringify({ message: error.message }));
  };

  /** The answer's events (each `[type, payload]`), `usage` and stop reason, from the reply. */
  const compose = (body: Record<string, unknown>, reply: BedrockScriptedReply) => {
    const texts = textsOf(body);
    const guard = guardrailOf(body.guardrailConfig, guardrails);
    const blocked = guard.guardrail?.blockedWords.some((w) => texts.lastUser.toLowerCase().includes(w));
    const text = blocked
      ? (guard.guardrail?.blockedInputMessage ?? '')
      : forcedTool(body.toolConfig) !== undefined && !reply.toolCalls && reply.text !== undefined
        ? ''
        : (reply.text ??
          (reply.toolCalls || reply.reasoning ? '' : texts.lastToolResult ? `The tool ${texts.lastToolResult.name} returned: ${texts.lastToolResult.content}` : `You said: ${texts.lastUser}`));
    const scripted = blocked ? [] : (reply.toolCalls ?? []).map((c) => ({ id: c.id ?? toolUseId(), name: c.name, input: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) }));
    // A model forced to use a tool (toolChoice any or tool) answers through one: the scripted text becomes the input of the tool named, or of the first.
    const forced = blocked || scripted.length > 0 || reply.text === undefined ? undefined : forcedTool(body.toolConfig);
    const calls = forced ? [{ id: toolUseId(), name: forced, input: reply.text as string }] : scripted;
    const stopReason: BedrockStopReason = blocked
      ? 'guardrail_intervened'
      : (reply.stopReason ?? (reply.finishReason ? (STOP[reply.finishReason] as BedrockStopReason) : calls.length > 0 ? 'tool_use' : 'end_turn'));
    const events: [string, Record<string, unknown>][] = [['messageStart', { role: 'assistant' }]];
    const content: Record<string, unknown>[] = [];
    let index = 0;
    if (reply.reasoning && !blocked) {
      const signature = signThinking(reply.reasoning);
      for (const piece of words(reply.reasoning)) events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: piece } } }]);
      events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature } } }], ['contentBlockStop', { contentBlockIndex: index }]);
      content.push({ reasoningContent: { reasoningText: { text: reply.reasoning, signature } } });
      index++;
    }
    if (text) {
      for (const piece of words(text)) events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { text: piece } }]);
      events.push(['contentBlockStop', { contentBlockIndex: index }]);
      content.push({ text });
      index++;
    }
    for (const call of calls) {
      events.push(['contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: call.id, name: call.name } } }]);
      const third = Math.ceil(call.input.length / 3);
      for (let at = 0; at < call.input.length; at += third) events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: call.input.slice(at, at + third) } } }]);
      events.push(['contentBlockStop', { contentBlockIndex: index }]);
      let input: unknown = {};
      try {
        input = JSON.parse(call.input);
      } catch {}
      content.push({ toolUse: { toolUseId: call.id, name: call.name, input } });
      index++;
    }
    events.push(['messageStop', { stopReason }]);
    const inputTokens = reply.usage ? reply.usage.promptTokens : Math.ceil(texts.all.length / 4);
    const outputTokens = reply.usage ? reply.usage.completionTokens : words(text).length + calls.length * 8;
    const usage =
      reply.usage === null
        ? undefined
        : {
            inputTokens,
            outputTokens,
            totalTokens: reply.usage?.totalTokens ?? inputTokens + outputTokens,
            ...(reply.usage?.cacheReadInputTokens !== undefined ? { cacheReadInputTokens: reply.usage.cacheReadInputTokens } : {}),
            ...(reply.usage?.cacheWriteInputTokens !== undefined ? { cacheWriteInputTokens: reply.usage.cacheWriteInputTokens } : {}),
          };
    const trace =
      blocked && guard.trace ? { guardrail: { inputAssessment: { [guard.guardrail?.identifier ?? '']: { wordPolicy: { customWords: [{ match: 'forbidden', action: 'BLOCKED' }] } } } } } : undefined;
    if (usage) events.push(['metadata', { usage, metrics: { latencyMs: 42 }, ...(trace ? { trace } : {}) }]);
    return { events, content, stopReason, usage, trace };
  };

  const stream = async (res: ServerResponse, record: RecordedBedrockRequest, body: Record<string, unknown>, reply: BedrockScriptedReply, gone: () => boolean) => {
    const { events } = compose(body, reply);
    record.status = 200;
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomUUID() });
    for (const [i, [type, payload]] of events.entries()) {
      if (gone()) return;
      if (reply.exception && i === (reply.exception.afterEvents ?? 2)) {
        res.end(encodeException(reply.exception.type, { message: reply.exception.message ?? `${reply.exception.type} raised by the fake` }));
        return;
      }
      if (reply.stallAfterEvents !== undefined && i === reply.stallAfterEvents) return;
      if (reply.dropAfterEvents !== undefined && i === reply.dropAfterEvents) {
        res.socket?.destroy();
        return;
      }
      if (i > 0 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      const frame = Buffer.from(encodeEvent(type, { ...payload, p: padding() }));
      if (reply.corruptEvent === i) frame[frame.length - 1] = (frame[frame.length - 1] as number) ^ 1;
      res.write(frame);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(path);
    const operation = route ? (route[2] as string) : path === '/foundation-models' ? 'foundation-models' : 'unknown';
    let modelId: string | undefined;
    try {
      modelId = route ? decodeURIComponent(route[1] as string) : undefined;
    } catch {}
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : {};
      if (isObject(parsed)) body = parsed;
    } catch {}
    const { ended, closed } = watchExchange(res);
    const record: RecordedBedrockRequest = { method: req.method ?? 'GET', path: url, operation, modelId, headers: req.headers, raw: raw.toString('utf8'), body, status: 0, ended };
    requests.push(record);

    const authError = verifySigV4({ method: record.method, url, headers: req.headers, body: raw }, { region, service: 'bedrock', credentials: options.credentials });
    if (authError) return sendError(res, record, authError);
    if (operation === 'foundation-models' && record.method === 'GET') {
      record.status = 200;
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID() });
      const summaries = models.map((id) => ({
        modelArn: `arn:aws:bedrock:${region}::foundation-model/${id}`,
        modelId: id,
        providerName: id.split('.').at(-2) ?? id,
        inputModalities: textOnly.includes(id) ? ['TEXT'] : ['TEXT', 'IMAGE'],
        outputModalities: ['TEXT'],
        responseStreamingSupported: true,
        inferenceTypesSupported: ['ON_DEMAND'],
        modelLifecycle: { status: 'ACTIVE' },
      }));
      return res.end(JSON.stringify({ modelSummaries: summaries }));
    }
    if (!route || record.method !== 'POST') return sendError(res, record, { status: 404, type: 'UnknownOperationException', message: 'The requested operation is not recognized by the service.' });
    if (raw.length > 0 && Object.keys(body).length === 0 && raw.toString('utf8').trim() !== '{}') {
      return sendError(res, record, { status: 400, type: 'SerializationException', message: 'Malformed JSON in the request body.' });
    }
    if (!modelId || !models.includes(modelId)) return sendError(res, record, { status: 400, type: 'ValidationException', message: 'The provided model identifier is invalid.' });
    const problem = checkConverse(body, { guardrails, textOnly: textOnly.includes(modelId) });
    if (problem) return sendError(res, record, problem);
    if (Math.ceil(textsOf(body).all.length / 4) > maxInputTokens) return sendError(res, record, { status: 400, type: 'ValidationException', message: 'Input is too long for requested model.' });

    const reply = queue.shift() ?? {};
    if (reply.hang) return;
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.status !== undefined) {
      const [type, message] = BY_STATUS[reply.status] ?? ['InternalServerException', 'The system encountered an unexpected error during processing.'];
      return sendError(res, record, { status: reply.status, type: reply.errorType ?? type, message: reply.errorMessage ?? message });
    }
    if (operation === 'converse-stream') return stream(res, record, body, reply, closed);
    const { content, stopReason, usage, trace } = compose(body, reply);
    record.status = 200;
    res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID() });
    res.end(JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason, ...(usage ? { usage } : {}), metrics: { latencyMs: 42 }, ...(trace ? { trace } : {}) }));
  };

  const server = await startLoopback(
    async (req, res, raw) => void (await handle(req, res, raw)),
    (res, error) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(error) })),
  );
  const url = server.origin;
  return {
    url,
    requests,
    script(...replies) {
      queue.push(...replies);
    },
    lastRequest: () => requests[requests.length - 1],
    reset() {
      queue = [];
      requests.length = 0;
    },
    close: () => server.close(),
  };
}
