import type { ScriptedChatReply } from '@agent-platform/core/testing';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { echo, invalid, isObject, pieces, randomId, scriptedError, sleep, tokens, words } from '../openai-chat-server.js';
import { type Exchange, replyQueue, type ScriptedFake, startExchangeServer, writeEvents } from './exchange.js';
import { checkResponsesBody } from './responses-request.js';

/**
 * A loopback OpenAI Responses API (`POST /v1/responses`, `GET /v1/models`), as
 * openai/openai-openapi documents it and the `openai` package types it (every event type sent
 * is one of `ResponseStreamEvent['type']`, checked by the compiler):
 *
 * - Bearer auth (401 `invalid_api_key`); the body checked by `checkResponsesBody`.
 * - `stream: true` answers `text/event-stream` records `event: <type>` + `data: <json>` with
 *   increasing `sequence_number`, in the documented order: `response.created`,
 *   `response.in_progress`; a reasoning item (`response.output_item.added`,
 *   `response.reasoning_summary_part.added`, `response.reasoning_summary_text.delta`…,
 *   `…text.done`, `…part.done`, `response.output_item.done`); a message item
 *   (`output_item.added`, `response.content_part.added`, `response.output_text.delta`…,
 *   `response.output_text.done`, `response.content_part.done`, `output_item.done`); each function
 *   call as its own item (`output_item.added` with `call_id` and `name`,
 *   `response.function_call_arguments.delta`…, `…arguments.done`, `output_item.done`); then
 *   `response.completed`, or `response.incomplete` (`incomplete_details.reason`:
 *   `max_output_tokens` for a `length` finish, `content_filter`), with `usage` (`input_tokens`,
 *   `input_tokens_details.cached_tokens`, `output_tokens`, `output_tokens_details.reasoning_tokens`).
 * - Failures: an HTTP status with OpenAI's error body (429 with `retry-after-ms` and
 *   `retry-after`), `response.failed` with `response.error`, or an `error` event (the documented
 *   flat `{ type, code, message, param }`, or the nested `{ error: {…} }` the service also sends).
 * - `stream: false` answers the final `response` object.
 */

export interface ResponsesScriptedReply extends ScriptedChatReply {
  /** After `response.in_progress`: `response.failed` with this error (no output). */
  readonly failed?: { readonly code: string; readonly message: string };
  /**
   * After `response.in_progress`: an `error` event with this code (nested: in an `error` member,
   * whose `type` is `type`, default the code), then `response.failed`.
   */
  readonly errorEvent?: { readonly code: string; readonly message: string; readonly nested?: boolean; readonly type?: string; readonly param?: string };
  /** For a 429: the wait in seconds (default 1), sent as `retry-after-ms` and `retry-after`. */
  readonly retryAfterSeconds?: number;
  readonly delayMs?: number;
  readonly hang?: boolean;
  readonly dropAfterChunks?: number;
}

export interface FakeResponsesServerOptions {
  /** The key it takes (`Authorization: Bearer …`). Default `sk-responses`. */
  readonly apiKey?: string;
  /** The models it serves: others answer 404 `model_not_found`. Default: any, listing `gpt-4o-mini`, `gpt-5-mini`, `o4-mini`. */
  readonly models?: readonly string[];
  /**
   * The models' context window, in the fake's rough tokens of the input: a longer input is
   * refused as the service does, `context_length_exceeded` (param `input`): a 400 without
   * `stream`, an `error` event after `response.in_progress` with it. Default: unlimited.
   */
  readonly contextTokens?: number;
}

/** The service's words for an input longer than the model's context window. */
const CONTEXT_WINDOW = 'Your input exceeds the context window of this model. Please adjust your input and try again.';

export interface FakeResponsesServer extends ScriptedFake<ResponsesScriptedReply> {
  /** `http://127.0.0.1:<port>/v1`, a client's `baseURL`. */
  readonly url: string;
}

type EventType = ResponseStreamEvent['type'];

/** The last user text of the input, for the default echo. */
function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  const items = Array.isArray(input) ? input.filter(isObject) : [];
  const last = items[items.length - 1];
  if (last?.type === 'function_call_output') return `__tool__${String(last.output)}`;
  const user = [...items].reverse().find((item) => item.role === 'user');
  const content = user?.content;
  if (typeof content === 'string') return content;
  return (Array.isArray(content) ? content : []).map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

export async function startFakeResponsesServer(options: FakeResponsesServerOptions = {}): Promise<FakeResponsesServer> {
  const apiKey = options.apiKey ?? 'sk-responses';
  const replies = replyQueue<ResponsesScriptedReply>();

  const respond = async (exchange: Exchange) => {
    const body = exchange.record.body;
    const problem = (exchange.record.malformed ? invalid('We could not parse the JSON body of your request.') : undefined) ?? checkResponsesBody(body);
    const model = String(body.model);
    const unknownModel = !problem && options.models && !options.models.includes(model);
    if (problem || unknownModel) {
      const error = problem ?? { status: 404, message: `The model '${model}' does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' };
      return exchange.json(error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } });
    }
    const overflow = options.contextTokens !== undefined && tokens(JSON.stringify(body.input ?? '')) > options.contextTokens;
    const tooLong = { message: CONTEXT_WINDOW, type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' };
    if (overflow && body.stream !== true) return exchange.json(400, { error: tooLong });
    const said = lastUserText(body.input);
    const reply: ResponsesScriptedReply = (overflow ? { errorEvent: { ...tooLong, nested: true } } : replies.next()) ?? {
      text: said.startsWith('__tool__') ? `The tool returned: ${said.slice(8)}` : (echo({ messages: [{ role: 'user', content: said }] }).text ?? ''),
    };
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.hang || exchange.closed()) return;
    if (reply.status !== undefined) {
      const error = scriptedError(reply.status, undefined);
      const wait = reply.retryAfterSeconds ?? 1;
      const headers: Record<string, string> = reply.status === 429 ? { 'retry-after-ms': String(wait * 1000), 'retry-after': String(wait) } : {};
      return exchange.json(error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } }, { 'x-request-id': randomId('req_', 16), ...headers });
    }

    const id = randomId('resp_', 40);
    const created = Math.floor(Date.now() / 1000);
    const records: string[] = [];
    let sequence = 0;
    const emit = (type: EventType, fields: Record<string, unknown>) => records.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
    const output: Record<string, unknown>[] = [];
    const response = (status: string, extra: Record<string, unknown> = {}) => ({
      id,
      object: 'response',
      created_at: created,
      status,
      background: false,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      model: `${model}-2025-01-01`,
      output: status === 'in_progress' ? [] : output,
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: body.previous_response_id ?? null,
      reasoning: { effort: null, summary: null, ...(isObject(body.reasoning) ? body.reasoning : {}) },
      service_tier: 'default',
      store: body.store ?? true,
      temperature: body.temperature ?? 1,
      text: body.text ?? { format: { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools: body.tools ?? [],
      top_p: body.top_p ?? 1,
      truncation: 'disabled',
      usage: null,
      user: null,
      metadata: {},
      ...extra,
    });
    emit('response.created', { response: response('in_progress') });
    emit('response.in_progress', { response: response('in_progress') });
    if (reply.failed || reply.errorEvent) {
      const error = reply.failed ?? (reply.errorEvent as { code: string; message: string });
      if (reply.errorEvent) {
        const fields = { code: error.code, message: error.message, param: reply.errorEvent.param ?? null };
        emit('error', reply.errorEvent.nested ? { error: { type: reply.errorEvent.type ?? error.code, ...fields } } : fields);
      }
      emit('response.failed', { response: response('failed', { error: { code: error.code, message: error.message } }) });
    } else {
      if (reply.reasoning) {
        const item = { id: randomId('rs_', 40), type: 'reasoning', summary: [] as unknown[] };
        const at = { item_id: item.id, output_index: output.length, summary_index: 0 };
        emit('response.output_item.added', { output_index: at.output_index, item });
        emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
        for (const delta of words(reply.reasoning)) emit('response.reasoning_summary_text.delta', { ...at, delta });
        emit('response.reasoning_summary_text.done', { ...at, text: reply.reasoning });
        emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: reply.reasoning } });
        const done = { ...item, summary: [{ type: 'summary_text', text: reply.reasoning }] };
        output.push(done);
        emit('response.output_item.done', { output_index: at.output_index, item: done });
      }
      if (reply.text) {
        const item = { id: randomId('msg_', 40), type: 'message', status: 'in_progress', role: 'assistant', content: [] as unknown[] };
        const at = { item_id: item.id, output_index: output.length, content_index: 0 };
        const part = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });
        emit('response.output_item.added', { output_index: at.output_index, item });
        emit('response.content_part.added', { ...at, part: part('') });
        for (const delta of words(reply.text)) emit('response.output_text.delta', { ...at, delta, logprobs: [] });
        emit('response.output_text.done', { ...at, text: reply.text, logprobs: [] });
        emit('response.content_part.done', { ...at, part: part(reply.text) });
        const done = { ...item, status: 'completed', content: [part(reply.text)] };
        output.push(done);
        emit('response.output_item.done', { output_index: at.output_index, item: done });
      }
      for (const call of reply.toolCalls ?? []) {
        const item = { id: randomId('fc_', 40), type: 'function_call', status: 'in_progress', arguments: '', call_id: randomId('call_'), name: call.name };
        const at = { item_id: item.id, output_index: output.length };
        emit('response.output_item.added', { output_index: at.output_index, item });
        for (const delta of pieces(call.arguments)) emit('response.function_call_arguments.delta', { ...at, delta });
        emit('response.function_call_arguments.done', { ...at, arguments: call.arguments });
        const done = { ...item, status: 'completed', arguments: call.arguments };
        output.push(done);
        emit('response.output_item.done', { output_index: at.output_index, item: done });
      }
      const inputTokens = reply.usage?.promptTokens ?? tokens(JSON.stringify(body.input ?? ''));
      const outputTokens = reply.usage?.completionTokens ?? tokens(`${reply.reasoning ?? ''} ${reply.text ?? ''}`) + (reply.toolCalls ?? []).reduce((n, c) => n + tokens(c.arguments), 0);
      const usage = {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: reply.usage?.cachedPromptTokens ?? 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: reply.usage?.reasoningTokens ?? (reply.reasoning ? tokens(reply.reasoning) : 0) },
        total_tokens: reply.usage?.totalTokens ?? inputTokens + outputTokens,
      };
      const reason = reply.finishReason === 'length' ? 'max_output_tokens' : reply.finishReason === 'content_filter' ? 'content_filter' : undefined;
      if (reason) emit('response.incomplete', { response: response('incomplete', { incomplete_details: { reason }, usage }) });
      else emit('response.completed', { response: response('completed', { usage }) });
    }

    if (body.stream !== true) {
      const last = records[records.length - 1] as string;
      return exchange.json(200, (JSON.parse(last.slice(last.indexOf('data: ') + 6)) as { response: unknown }).response);
    }
    exchange.startStream({ 'x-request-id': randomId('req_', 16) });
    await writeEvents(exchange, records, { ...(reply.chunkDelayMs ? { delayMs: reply.chunkDelayMs } : {}), ...(reply.dropAfterChunks !== undefined ? { dropAfter: reply.dropAfterChunks } : {}) });
  };

  const loopback = await startExchangeServer(async (exchange) => {
    const { record } = exchange;
    const key = /^Bearer (.+)$/.exec(String(record.headers.authorization ?? ''))?.[1];
    if (key !== apiKey) {
      const message = key ? `Incorrect API key provided: ${key.slice(0, 3)}****${key.slice(-4)}.` : "You didn't provide an API key.";
      return exchange.json(401, { error: { message, type: 'invalid_request_error', param: null, code: key ? 'invalid_api_key' : null } });
    }
    if (record.method === 'GET' && record.path === '/v1/models') {
      const models = options.models ?? ['gpt-4o-mini', 'gpt-5-mini', 'o4-mini'];
      return exchange.json(200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })) });
    }
    if (record.method !== 'POST' || record.path !== '/v1/responses') {
      return exchange.json(404, { error: { message: `Invalid URL (${record.method} ${record.path})`, type: 'invalid_request_error', param: null, code: null } });
    }
    await respond(exchange);
  });

  return {
    url: `${loopback.origin}/v1`,
    ...replies.controls(loopback),
  };
}
