import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { checkMessagesRequest, type MessagesError, signThinking } from './anthropic-validate.js';
import { startLoopback, watchExchange } from './loopback.js';

/**
 * A loopback stand-in for Anthropic's Messages API (`https://api.anthropic.com/v1`), speaking
 * its documented wire format with answers a test scripts (Node built-ins only).
 *
 * - Every request must carry `x-api-key` (401 `authentication_error` otherwise) and
 *   `anthropic-version` (400 `invalid_request_error`); bodies are checked as the API checks
 *   them (`anthropic-validate.ts`); errors are `{ type: 'error', error: { type, message },
 *   request_id }` with the API's types, `retry-after` on 429/529.
 * - `POST /v1/messages` with `stream: true` answers `text/event-stream` with named events in
 *   the documented order: `message_start` (usage with `input_tokens` and the cache counts),
 *   per content block `content_block_start` / `content_block_delta` (`thinking_delta` then
 *   `signature_delta` for a thinking block, only when the request enabled thinking; a thinking
 *   block sent back must carry the signature of its text, as the API checks;
 *   `text_delta` word by word; `input_json_delta` fragments for each `tool_use`, the first
 *   one empty) / `content_block_stop`, a `ping` after the first block starts, `message_delta`
 *   (`stop_reason`, `stop_sequence`, cumulative `usage`), `message_stop`. A scripted
 *   `streamError` sends an `error` event mid-stream. Without `stream` the message is one JSON.
 * - Structured output: with `output_config.format` the scripted text is the answer; with the
 *   forced `json` tool (the AI SDK's fallback: `tool_choice` `tool` json, or `any` with json the only tool) it becomes that tool's input.
 * - `GET /v1/models` (`limit`, `after_id`, `has_more`, `first_id`, `last_id`).
 */

export interface AnthropicScript {
  readonly text?: string;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string; readonly id?: string }[];
  /** Ours (`stop`, `length`, `tool_calls`, `content_filter`) or Anthropic's own stop reason. */
  readonly finishReason?: string;
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number; readonly totalTokens?: number };
  /** Of the prompt tokens, read from / written to the cache (Anthropic's `input_tokens` excludes both). */
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  /** Thinking text, streamed in a thinking block when the request enabled thinking. */
  readonly reasoning?: string;
  readonly chunkDelayMs?: number;
  /** Answer this status with the API's error body (type from the status, or `errorType`). */
  readonly status?: number;
  readonly errorType?: string;
  readonly errorMessage?: string;
  /** A `retry-after` header (seconds) on the error answer. */
  readonly retryAfter?: string;
  /** After this many events, an `error` event of this type ends the stream. */
  readonly streamError?: { readonly afterEvents: number; readonly type: string; readonly message: string };
  readonly hang?: boolean;
  readonly dropAfterEvents?: number;
}

export interface RecordedMessagesRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
  status: number;
  readonly ended: Promise<'completed' | 'client_closed'>;
}

export interface FakeAnthropicServer {
  /** `http://127.0.0.1:<port>/v1`, the provider's `baseURL`. */
  readonly url: string;
  readonly requests: RecordedMessagesRequest[];
  script(...replies: AnthropicScript[]): void;
  lastRequest(): RecordedMessagesRequest | undefined;
  reset(): void;
  close(): Promise<void>;
}

export interface FakeAnthropicOptions {
  readonly apiKey: string;
  /** The models it serves; others answer 404 `not_found_error` (`model: <name>`). */
  readonly models: readonly string[];
  /** A prompt longer than this many characters answers 400 "prompt is too long". Default 100000. */
  readonly contextChars?: number;
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
const STOP_REASONS: Readonly<Record<string, string>> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };

const id = (prefix: string) => `${prefix}${randomBytes(12).toString('base64url')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const words = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];
const pieces = (text: string) => (text.length < 4 ? [text] : [text.slice(0, 3), text.slice(3, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))]);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : JSON.stringify(b))).join('') : '';

export async function startFakeAnthropicServer(options: FakeAnthropicOptions): Promise<FakeAnthropicServer> {
  const requests: RecordedMessagesRequest[] = [];
  let queue: AnthropicScript[] = [];
  const contextChars = options.contextChars ?? 100_000;

  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req_'), ...headers });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: ServerResponse, error: MessagesError, headers: Record<string, string> = {}) =>
    sendJson(res, error.status, { type: 'error', error: { type: error.type, message: error.message }, request_id: id('req_') }, headers);
  const authError = (req: IncomingMessage): MessagesError | undefined => {
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key === '') return { status: 401, type: 'authentication_error', message: 'x-api-key header is required' };
    if (key !== options.apiKey) return { status: 401, type: 'authentication_error', message: 'invalid x-api-key' };
    if (typeof req.headers['anthropic-version'] !== 'string') return { status: 400, type: 'invalid_request_error', message: 'anthropic-version: header is required' };
    return undefined;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, record: RecordedMessagesRequest, closed: () => boolean) => {
    const body = record.body;
    const reply: AnthropicScript = queue.shift() ?? { text: `You said: ${textOf((body.messages as Record<string, unknown>[]).at(-1)?.content)}` };
    if (reply.hang || closed()) return;
    if (reply.status !== undefined) {
      record.status = reply.status;
      const type = reply.errorType ?? ERROR_TYPES[reply.status] ?? 'api_error';
      return sendError(res, { status: reply.status, type, message: reply.errorMessage ?? `scripted ${type}` }, reply.retryAfter !== undefined ? { 'retry-after': reply.retryAfter } : {});
    }
    const thinking = isObject(body.thinking) && body.thinking.type === 'enabled' && reply.reasoning !== undefined;
    const choice = isObject(body.tool_choice) ? body.tool_choice : undefined;
    // The AI SDK's fallback for structured output: a forced `json` tool whose input is the answer.
    const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
    const forced = (choice?.type === 'tool' && choice.name === 'json') || (choice?.type === 'any' && tools.length === 1 && tools[0]?.name === 'json');
    const jsonTool = forced && reply.text !== undefined && !reply.toolCalls;
    const calls = jsonTool ? [{ name: 'json', arguments: reply.text as string }] : (reply.toolCalls ?? []);
    const text = jsonTool ? '' : (reply.text ?? '');
    const stopReason = jsonTool ? 'tool_use' : (STOP_REASONS[reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop')] ?? reply.finishReason);
    const cacheRead = reply.cacheRead ?? 0;
    const cacheWrite = reply.cacheWrite ?? 0;
    const prompt = reply.usage?.promptTokens ?? Math.ceil(JSON.stringify(body.messages).length / 4);
    const output = reply.usage?.completionTokens ?? Math.ceil((text.length + (reply.reasoning?.length ?? 0)) / 4) + 1;
    const usage = { input_tokens: prompt - cacheRead - cacheWrite, cache_creation_input_tokens: cacheWrite, cache_read_input_tokens: cacheRead };
    const blocks: { start: Record<string, unknown>; deltas: Record<string, unknown>[] }[] = [];
    if (thinking) {
      blocks.push({
        start: { type: 'thinking', thinking: '', signature: '' },
        deltas: [...words(reply.reasoning ?? '').map((w) => ({ type: 'thinking_delta', thinking: w })), { type: 'signature_delta', signature: signThinking(reply.reasoning ?? '') }],
      });
    }
    if (text !== '') blocks.push({ start: { type: 'text', text: '' }, deltas: words(text).map((w) => ({ type: 'text_delta', text: w })) });
    for (const call of calls) {
      blocks.push({
        start: { type: 'tool_use', id: call.id ?? id('toolu_'), name: call.name, input: {} },
        deltas: ['', ...pieces(call.arguments)].map((partial_json) => ({ type: 'input_json_delta', partial_json })),
      });
    }
    const message = { id: id('msg_'), type: 'message', role: 'assistant', model: body.model };
    record.status = 200;
    if (body.stream !== true) {
      const content = blocks.map(({ start, deltas }) =>
        start.type === 'tool_use'
          ? { ...start, input: JSON.parse(deltas.map((d) => d.partial_json).join('')) }
          : start.type === 'thinking'
            ? { type: 'thinking', thinking: reply.reasoning, signature: deltas.at(-1)?.signature }
            : { type: 'text', text },
      );
      return sendJson(res, 200, { ...message, content, stop_reason: stopReason, stop_sequence: null, usage: { ...usage, output_tokens: output } });
    }

    const events: [string, Record<string, unknown>][] = [
      ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }],
    ];
    blocks.forEach(({ start, deltas }, index) => {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: start }]);
      if (index === 0) events.push(['ping', { type: 'ping' }]);
      for (const delta of deltas) events.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
      events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    });
    events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { ...usage, output_tokens: output } }]);
    events.push(['message_stop', { type: 'message_stop' }]);

    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': id('req_') });
    res.flushHeaders();
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (closed()) return;
      if (i === reply.dropAfterEvents) return void req.socket.destroy();
      if (reply.streamError && i === reply.streamError.afterEvents) {
        const { type, message: text } = reply.streamError;
        return void res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message: text } })}\n\n`);
      }
      const [name, data] = events[i] as [string, Record<string, unknown>];
      res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      const denied = authError(req);
      if (denied) return sendError(res, denied);
      const limit = Number(url.searchParams.get('limit') ?? 20);
      const after = url.searchParams.get('after_id');
      const from = after ? options.models.indexOf(after) + 1 : 0;
      const page = options.models.slice(from, from + limit).map((name) => ({ type: 'model', id: name, display_name: name, created_at: '2025-01-01T00:00:00Z' }));
      return sendJson(res, 200, { data: page, has_more: from + limit < options.models.length, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null });
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/messages') return sendError(res, { status: 404, type: 'not_found_error', message: 'Not Found' });
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    const exchange = watchExchange(res);
    const record: RecordedMessagesRequest = { method: req.method, path: url.pathname, headers: req.headers, body: isObject(parsed) ? parsed : {}, status: 0, ended: exchange.ended };
    requests.push(record);
    const problem =
      authError(req) ??
      (isObject(parsed)
        ? checkMessagesRequest(parsed, { models: options.models, contextChars })
        : { status: 400, type: 'invalid_request_error', message: 'There was an error parsing the body of your request' });
    if (problem) {
      record.status = problem.status;
      return sendError(res, problem);
    }
    await answer(req, res, record, exchange.closed);
  };

  const loopback = await startLoopback(
    (req, res, body) => handle(req, res, body.toString('utf8')),
    (res, error) => sendError(res, { status: 500, type: 'api_error', message: String(error) }),
  );
  return {
    url: `${loopback.origin}/v1`,
    requests,
    script: (...replies) => void queue.push(...replies),
    lastRequest: () => requests.at(-1),
    reset() {
      queue = [];
      requests.length = 0;
    },
    close: () => loopback.close(),
  };
}
