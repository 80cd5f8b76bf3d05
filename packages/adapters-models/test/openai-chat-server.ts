import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { startLoopback, watchExchange } from './fakes/loopback.js';

/**
 * A loopback stand-in for an OpenAI-compatible chat server (OpenAI itself, or Ollama's `/v1`),
 * speaking the documented wire format of `POST /v1/chat/completions` and `GET /v1/models`,
 * with answers a test scripts. It uses only Node built-ins, so tests of other packages can
 * import it by relative path.
 *
 * - Requests are validated as OpenAI does (model, messages and their roles, tool calls and the
 *   tool messages answering them, tools, tool_choice, temperature, top_p, max_tokens,
 *   max_completion_tokens, n, stream, stream_options, unknown arguments), with OpenAI's error
 *   body `{ error: { message, type, param, code } }`.
 * - `stream: false` answers JSON `{ id, object: 'chat.completion', created, model, choices:
 *   [{ index, message: { role: 'assistant', content, tool_calls? }, finish_reason }], usage }`.
 * - `stream: true` answers `text/event-stream`: `data: <chat.completion.chunk JSON>` events (a
 *   role chunk, the text split into words, each tool call as a header fragment with id and name
 *   followed by its arguments in pieces, a chunk with `finish_reason`), a last chunk with
 *   `choices: []` and `usage` when `stream_options.include_usage`, then `data: [DONE]`.
 * - Replies come from the queue filled by `script()`, else from the `reply` option, else the
 *   default: `You said: <last user message>` (or, after a tool message, `The tool <name>
 *   returned: <content>`).
 */

export type ScriptedFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ScriptedToolCall {
  readonly name: string;
  /** A JSON text (sent as is, even if malformed) or an object (serialised). */
  readonly arguments: string | Record<string, unknown>;
  /** Default `call_<random>`. */
  readonly id?: string;
}

export interface ScriptedUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Default the sum. */
  readonly totalTokens?: number;
}

export interface ScriptedReply {
  /** The assistant's text, streamed word by word. */
  readonly text?: string;
  /**
   * Reasoning streamed before the text, word by word, in the field an OpenAI-compatible
   * reasoning server uses (`reasoning_content`: DeepSeek, vLLM up to 0.10; `reasoning`: newer
   * vLLM, Ollama); in a JSON answer, the message's field of that name.
   */
  readonly reasoning?: string;
  /** The field `reasoning` is sent in. Default `reasoning_content`. */
  readonly reasoningField?: 'reasoning_content' | 'reasoning';
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  readonly finishReason?: ScriptedFinishReason;
  /** Default: counted from the request and the reply. `null`: no usage at all (a server that gives none). */
  readonly usage?: ScriptedUsage | null;
  /** Answer this HTTP status with OpenAI's error body instead (the request still counts as validated). */
  readonly status?: number;
  /** The error body's message for `status` or `streamError`. */
  readonly errorMessage?: string;
  /** The headers of the `status` answer, instead of the default (`retry-after-ms: 10` on a retryable status). */
  readonly errorHeaders?: Record<string, string>;
  /** Wait this long before answering (before the headers). */
  readonly delayMs?: number;
  /** Wait this long before each streamed event after the first. */
  readonly chunkDelayMs?: number;
  /** After two events, send an event whose data is not JSON, then end the response. */
  readonly malformed?: boolean;
  /** After two events, send `data: {"error": {...}}` with this message, then end the response. */
  readonly streamError?: string;
  /** Never answer (the connection stays open until the client gives up). */
  readonly hang?: boolean;
  /** Send this many events, then stall: keep the connection open and send nothing more (JSON: no answer). */
  readonly stallAfterChunks?: number;
  /** Send this many events, then destroy the socket (a connection reset mid-stream; JSON: before the answer). */
  readonly dropAfterChunks?: number;
}

export interface RecordedChatRequest {
  readonly method: string;
  /** The path with its query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly authorization: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** The raw body text. */
  readonly raw: string;
  /** The parsed JSON body (`{}` when it was not a JSON object). */
  readonly body: Record<string, unknown>;
  /** The HTTP status answered (0 while no answer was started). */
  status: number;
  /** How the exchange ended: the answer was written in full, or the client closed the connection first. */
  readonly ended: Promise<'completed' | 'client_closed'>;
}

export interface FakeChatServerOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401). Default: any key or none. */
  readonly apiKey?: string;
  /**
   * The models it serves. When given, other model names answer 404 `model_not_found`. Default:
   * any name is accepted and `GET /v1/models` lists `gpt-4o-mini`, `gpt-4o` and `llama3.2`.
   */
  readonly models?: readonly string[];
  /**
   * The models' context window, in the fake's rough tokens: a prompt longer than that answers
   * 400 `context_length_exceeded` as OpenAI words it. Default: unlimited.
   */
  readonly contextTokens?: number;
  /** Answers requests when the script queue is empty (return undefined for the default echo). */
  readonly reply?: (body: Record<string, unknown>) => ScriptedReply | undefined;
}

export interface FakeChatServer {
  /** Base URL including `/v1`, as an OpenAI client's `baseURL`. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`, as an Ollama host. */
  readonly origin: string;
  readonly port: number;
  /** Every request to `/v1/chat/completions`, in order (rejected ones too). */
  readonly requests: RecordedChatRequest[];
  /** Queue replies for the next chat requests, in order (a retried request takes the next one). */
  script(...replies: ScriptedReply[]): void;
  /** Replies still queued. */
  readonly pending: number;
  /** The last recorded chat request. */
  lastRequest(): RecordedChatRequest | undefined;
  /** Drops the queued replies and the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

/** An error answer: its status and OpenAI's `{ error: { message, type, param, code } }`. */
export interface ApiError {
  readonly status: number;
  readonly message: string;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
}

export const invalid = (message: string, param: string | null = null, code: string | null = null): ApiError => ({
  status: 400,
  message,
  type: 'invalid_request_error',
  param,
  code,
});

const KNOWN_PARAMETERS = new Set([
  'model',
  'messages',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`);
export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text of a message's content: a string or a list of parts (`{ type: 'text', text }`). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
      .filter((t) => t !== '')
      .join('\n');
  }
  return '';
}

function validContent(content: unknown): boolean {
  return typeof content === 'string' || (Array.isArray(content) && content.every((part) => isObject(part) && typeof part.type === 'string'));
}

function checkNumber(body: Record<string, unknown>, name: string, min: number, max: number, integer: boolean): ApiError | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    return invalid(`Invalid type for '${name}': expected ${integer ? 'an integer' : 'a number'}, but got ${typeName(value)} instead.`, name, 'invalid_type');
  }
  const kind = integer ? 'integer' : 'decimal';
  if (value < min) return invalid(`Invalid '${name}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`, name, `${kind}_below_min_value`);
  if (value > max) return invalid(`Invalid '${name}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`, name, `${kind}_above_max_value`);
  return undefined;
}

function validateMessages(messages: unknown): ApiError | undefined {
  if (messages === undefined) return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(messages)) return invalid(`Invalid type for 'messages': expected an array, but got ${typeName(messages)} instead.`, 'messages', 'invalid_type');
  if (messages.length === 0) {
    return invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }
  /** Ids of the last assistant message's tool calls not yet answered by a tool message. */
  let open: { at: number; ids: Set<string> } | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    const at = `messages[${i}]`;
    if (!isObject(m)) return invalid(`Invalid type for '${at}': expected an object, but got ${typeName(m)} instead.`, at, 'invalid_type');
    if (m.role === undefined) return invalid(`Missing required parameter: '${at}.role'.`, `${at}.role`, 'missing_required_parameter');
    if (typeof m.role !== 'string' || !ROLES.includes(m.role)) {
      return invalid(`Invalid value: '${String(m.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`, `${at}.role`, 'invalid_value');
    }
    if (open && m.role !== 'tool') {
      return invalid(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open.ids].join(', ')}`,
        `messages.[${open.at}].role`,
      );
    }
    switch (m.role) {
      case 'system':
      case 'developer':
      case 'user':
        if (m.content === undefined) return invalid(`Missing required parameter: '${at}.content'.`, `${at}.content`, 'missing_required_parameter');
        if (!validContent(m.content)) {
          return invalid(`Invalid type for '${at}.content': expected one of a string or array of objects, but got ${typeName(m.content)} instead.`, `${at}.content`, 'invalid_type');
        }
        break;
      case 'assistant': {
        const calls = m.tool_calls;
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls)) return invalid(`Invalid type for '${at}.tool_calls': expected an array, but got ${typeName(calls)} instead.`, `${at}.tool_calls`, 'invalid_type');
          if (calls.length === 0) {
            return invalid(`Invalid '${at}.tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.`, `${at}.tool_calls`, 'empty_array');
          }
          const ids = new Set<string>();
          for (let j = 0; j < calls.length; j++) {
            const c: unknown = calls[j];
            const cat = `${at}.tool_calls[${j}]`;
            if (!isObject(c)) return invalid(`Invalid type for '${cat}': expected an object, but got ${typeName(c)} instead.`, cat, 'invalid_type');
            if (typeof c.id !== 'string') return invalid(`Missing required parameter: '${cat}.id'.`, `${cat}.id`, 'missing_required_parameter');
            if (c.type !== 'function') return invalid(`Invalid value: '${String(c.type)}'. Supported values are: 'function'.`, `${cat}.type`, 'invalid_value');
            if (!isObject(c.function)) return invalid(`Missing required parameter: '${cat}.function'.`, `${cat}.function`, 'missing_required_parameter');
            if (typeof c.function.name !== 'string') return invalid(`Missing required parameter: '${cat}.function.name'.`, `${cat}.function.name`, 'missing_required_parameter');
            if (typeof c.function.arguments !== 'string') {
              return invalid(`Invalid type for '${cat}.function.arguments': expected a string, but got ${typeName(c.function.arguments)} instead.`, `${cat}.function.arguments`, 'invalid_type');
            }
            ids.add(c.id);
          }
          if (m.content !== undefined && m.content !== null && !validContent(m.content)) {
            return invalid(`Invalid type for '${at}.content': expected one of a string or array of objects, but got ${typeName(m.content)} instead.`, `${at}.content`, 'invalid_type');
          }
          open = { at: i, ids };
        } else if (!validContent(m.content)) {
          return invalid(`Invalid value for 'content': expected a string, got ${m.content === undefined ? 'undefined' : typeName(m.content)}.`, `${at}.content`);
        }
        break;
      }
      case 'tool': {
        if (typeof m.tool_call_id !== 'string') return invalid(`Missing required parameter: '${at}.tool_call_id'.`, `${at}.tool_call_id`, 'missing_required_parameter');
        if (!validContent(m.content)) {
          return invalid(`Invalid type for '${at}.content': expected one of a string or array of objects, but got ${typeName(m.content)} instead.`, `${at}.content`, 'invalid_type');
        }
        if (!open?.ids.has(m.tool_call_id)) {
          return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
        }
        open.ids.delete(m.tool_call_id);
        if (open.ids.size === 0) open = undefined;
        break;
      }
      default:
        // 'function': the legacy form, name and content.
        if (typeof m.name !== 'string') return invalid(`Missing required parameter: '${at}.name'.`, `${at}.name`, 'missing_required_parameter');
    }
  }
  if (open) {
    return invalid(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open.ids].join(', ')}`,
      `messages.[${open.at}].role`,
    );
  }
  return undefined;
}

function validateTools(body: Record<string, unknown>): ApiError | undefined {
  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) return invalid(`Invalid type for 'tools': expected an array, but got ${typeName(tools)} instead.`, 'tools', 'invalid_type');
    if (tools.length === 0) return invalid("Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'tools', 'empty_array');
    const names = new Set<string>();
    for (let i = 0; i < tools.length; i++) {
      const t: unknown = tools[i];
      const at = `tools[${i}]`;
      if (!isObject(t)) return invalid(`Invalid type for '${at}': expected an object, but got ${typeName(t)} instead.`, at, 'invalid_type');
      if (t.type !== 'function') return invalid(`Invalid value: '${String(t.type)}'. Supported values are: 'function' and 'custom'.`, `${at}.type`, 'invalid_value');
      if (!isObject(t.function)) return invalid(`Missing required parameter: '${at}.function'.`, `${at}.function`, 'missing_required_parameter');
      const name = t.function.name;
      if (typeof name !== 'string') return invalid(`Missing required parameter: '${at}.function.name'.`, `${at}.function.name`, 'missing_required_parameter');
      if (!/^[a-zA-Z0-9_-]+$/.test(name)) {
        return invalid(`Invalid '${at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `${at}.function.name`, 'invalid_value');
      }
      if (name.length > 64) {
        return invalid(
          `Invalid '${at}.function.name': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`,
          `${at}.function.name`,
          'string_above_max_length',
        );
      }
      if (t.function.description !== undefined && typeof t.function.description !== 'string') {
        return invalid(`Invalid type for '${at}.function.description': expected a string, but got ${typeName(t.function.description)} instead.`, `${at}.function.description`, 'invalid_type');
      }
      if (t.function.parameters !== undefined && !isObject(t.function.parameters)) {
        return invalid(`Invalid type for '${at}.function.parameters': expected an object, but got ${typeName(t.function.parameters)} instead.`, `${at}.function.parameters`, 'invalid_type');
      }
      if (names.has(name)) return invalid(`Invalid 'tools': duplicate function name '${name}'.`, 'tools');
      names.add(name);
    }
  }
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null) {
    if (tools === undefined || tools === null) return invalid("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice');
    const named = isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string';
    if (!named && !(typeof choice === 'string' && ['none', 'auto', 'required'].includes(choice))) {
      return invalid(`Invalid value for 'tool_choice': expected one of 'none', 'auto', 'required' or a named function.`, 'tool_choice', 'invalid_value');
    }
  }
  return undefined;
}

export function validate(body: Record<string, unknown>, models: readonly string[] | undefined): ApiError | undefined {
  for (const key of Object.keys(body)) {
    if (!KNOWN_PARAMETERS.has(key)) return invalid(`Unrecognized request argument supplied: ${key}`);
  }
  if (typeof body.model !== 'string' || body.model === '') return invalid('you must provide a model parameter');
  const messagesError = validateMessages(body.messages);
  if (messagesError) return messagesError;
  const toolsError = validateTools(body);
  if (toolsError) return toolsError;
  const numberError =
    checkNumber(body, 'temperature', 0, 2, false) ??
    checkNumber(body, 'top_p', 0, 1, false) ??
    checkNumber(body, 'max_tokens', 1, Number.MAX_SAFE_INTEGER, true) ??
    checkNumber(body, 'max_completion_tokens', 1, Number.MAX_SAFE_INTEGER, true) ??
    checkNumber(body, 'n', 1, 128, true);
  if (numberError) return numberError;
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    return invalid(`Invalid type for 'stream': expected a boolean, but got ${typeName(body.stream)} instead.`, 'stream', 'invalid_type');
  }
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (body.stream !== true) return invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
    if (!isObject(body.stream_options)) return invalid(`Invalid type for 'stream_options': expected an object, but got ${typeName(body.stream_options)} instead.`, 'stream_options', 'invalid_type');
    const include = body.stream_options.include_usage;
    if (include !== undefined && typeof include !== 'boolean') {
      return invalid(`Invalid type for 'stream_options.include_usage': expected a boolean, but got ${typeName(include)} instead.`, 'stream_options.include_usage', 'invalid_type');
    }
  }
  // OpenAI's reasoning models take only max_completion_tokens.
  if (body.max_tokens !== undefined && body.max_tokens !== null && /^(o\d|gpt-5)/.test(body.model)) {
    return invalid("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
  }
  if (models && !models.includes(body.model)) {
    return { status: 404, message: `The model \`${body.model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' };
  }
  return undefined;
}

/** A prompt longer than the context window, refused as OpenAI does. */
export function contextProblem(body: Record<string, unknown>, limit: number | undefined): ApiError | undefined {
  if (limit === undefined) return undefined;
  const used = (body.messages as Record<string, unknown>[]).reduce((sum, m) => sum + 4 + tokens(textOf(m.content)), 0);
  if (used <= limit) return undefined;
  return invalid(
    `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${used} tokens. Please reduce the length of the messages.`,
    'messages',
    'context_length_exceeded',
  );
}

/** The error a scripted `status` answers with, as OpenAI words it. */
export function scriptedError(status: number, message: string | undefined): ApiError {
  const known: Record<number, Omit<ApiError, 'status'>> = {
    400: { message: 'Invalid request.', type: 'invalid_request_error', param: null, code: null },
    401: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    403: { message: 'You are not allowed to sample from this model', type: 'invalid_request_error', param: null, code: null },
    404: { message: 'The model does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' },
    408: { message: 'Request timed out.', type: 'timeout', param: null, code: null },
    409: { message: 'The request conflicts with another request.', type: 'invalid_request_error', param: null, code: null },
    429: { message: 'Rate limit reached for requests per min (RPM). Please try again in 10ms.', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
    502: { message: 'Bad gateway.', type: 'server_error', param: null, code: null },
    503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', param: null, code: null },
  };
  const base = known[status] ?? { message: `HTTP ${status}`, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null };
  return { status, ...base, ...(message ? { message } : {}) };
}

/** Split into pieces that concatenate to the text: each word with the spaces after it. */
export const words = (text: string): string[] => (text === '' ? [] : text.split(/(?<=\s)(?=\S)/));

/** About three pieces of a tool call's arguments. */
export function pieces(text: string): string[] {
  if (text.length <= 2) return [text];
  const size = Math.ceil(text.length / 3);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Rough token count: words and punctuation marks. */
export const tokens = (text: string): number => text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;

export const randomId = (prefix: string, length = 24): string => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return prefix + Array.from(randomBytes(length), (b) => alphabet[b % alphabet.length]).join('');
};

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The default reply: echo the last user message, or report the last tool result. */
export function echo(body: Record<string, unknown>): ScriptedReply {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Record<string, unknown>[];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    let name = 'tool';
    for (const m of messages) {
      for (const call of Array.isArray(m.tool_calls) ? (m.tool_calls as Record<string, unknown>[]) : []) {
        const fn = call.function as { name?: unknown } | undefined;
        if (call.id === last.tool_call_id && typeof fn?.name === 'string') name = fn.name;
      }
    }
    return { text: `The tool ${name} returned: ${textOf(last.content)}` };
  }
  const user = [...messages].reverse().find((m) => m.role === 'user');
  return { text: `You said: ${textOf(user?.content)}` };
}

export async function startFakeChatServer(options: FakeChatServerOptions = {}): Promise<FakeChatServer> {
  const requests: RecordedChatRequest[] = [];
  let queue: ScriptedReply[] = [];

  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': randomId('req_', 16), ...headers });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: ServerResponse, error: ApiError, headers?: Record<string, string>) => {
    const retry = error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500;
    sendJson(res, error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } }, headers ?? (retry ? { 'retry-after-ms': '10' } : {}));
  };

  const authError = (req: IncomingMessage): ApiError | undefined => {
    if (options.apiKey === undefined) return undefined;
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!key) {
      return {
        status: 401,
        message:
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/API-keys.",
        type: 'invalid_request_error',
        param: null,
        code: null,
      };
    }
    if (key !== options.apiKey) {
      return {
        status: 401,
        message: `Incorrect API key provided: ${key.slice(0, 3)}****${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      };
    }
    return undefined;
  };

  const modelList = () => options.models ?? ['gpt-4o-mini', 'gpt-4o', 'llama3.2'];
  const modelObject = (id: string) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' });

  const complete = async (req: IncomingMessage, res: ServerResponse, record: RecordedChatRequest, isClosed: () => boolean) => {
    const body = record.body;
    const reply = queue.shift() ?? options.reply?.(body) ?? echo(body);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.hang || isClosed()) return;
    if (reply.status !== undefined) {
      record.status = reply.status;
      return sendError(res, scriptedError(reply.status, reply.errorMessage), reply.errorHeaders);
    }

    const model = body.model as string;
    const id = randomId('chatcmpl-', 29);
    const created = Math.floor(Date.now() / 1000);
    const text = reply.text ?? '';
    const calls = (reply.toolCalls ?? []).map((c) => ({
      id: c.id ?? randomId('call_'),
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    const finishReason: ScriptedFinishReason = reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    const n = typeof body.n === 'number' ? body.n : 1;
    const messages = body.messages as Record<string, unknown>[];
    const promptTokens = messages.reduce((sum, m) => sum + 4 + tokens(textOf(m.content)), 0);
    const completionTokens = tokens(text) + calls.reduce((sum, c) => sum + tokens(c.name) + tokens(c.arguments), 0);
    const usage =
      reply.usage === null
        ? undefined
        : reply.usage
          ? {
              prompt_tokens: reply.usage.promptTokens,
              completion_tokens: reply.usage.completionTokens,
              total_tokens: reply.usage.totalTokens ?? reply.usage.promptTokens + reply.usage.completionTokens,
            }
          : { prompt_tokens: promptTokens, completion_tokens: completionTokens * n, total_tokens: promptTokens + completionTokens * n };
    const usageBody = usage
      ? {
          ...usage,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        }
      : undefined;

    if (body.stream !== true) {
      if (reply.dropAfterChunks !== undefined) return void req.socket.destroy();
      if (reply.stallAfterChunks !== undefined) return;
      if (reply.streamError !== undefined) return sendError(res, scriptedError(500, reply.streamError));
      record.status = 200;
      if (reply.malformed) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"id": "chatcmpl-broken", "choices": [');
      }
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: Array.from({ length: n }, (_, index) => ({
          index,
          message: {
            role: 'assistant',
            content: text === '' && calls.length > 0 ? null : text,
            refusal: null,
            annotations: [],
            ...(reply.reasoning !== undefined ? { [reply.reasoningField ?? 'reasoning_content']: reply.reasoning } : {}),
            ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
          },
          logprobs: null,
          finish_reason: finishReason,
        })),
        ...(usageBody ? { usage: usageBody } : {}),
        service_tier: 'default',
        system_fingerprint: 'fp_fake00001',
      });
    }

    const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_fake00001',
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });
    const events: string[] = [];
    for (let index = 0; index < n; index++) {
      const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({ index, delta, logprobs: null, finish_reason: finish });
      events.push(JSON.stringify(chunk([choice({ role: 'assistant', content: text === '' && calls.length > 0 ? null : '', refusal: null })])));
      for (const piece of words(reply.reasoning ?? '')) events.push(JSON.stringify(chunk([choice({ content: null, [reply.reasoningField ?? 'reasoning_content']: piece })])));
      for (const piece of words(text)) events.push(JSON.stringify(chunk([choice({ content: piece })])));
      calls.forEach((call, k) => {
        events.push(JSON.stringify(chunk([choice({ tool_calls: [{ index: k, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })])));
        for (const piece of pieces(call.arguments)) events.push(JSON.stringify(chunk([choice({ tool_calls: [{ index: k, function: { arguments: piece } }] })])));
      });
      events.push(JSON.stringify(chunk([choice({}, finishReason)])));
    }
    if (includeUsage && usageBody) events.push(JSON.stringify(chunk([], { usage: usageBody })));
    events.push('[DONE]');

    record.status = 200;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': randomId('req_', 16) });
    // Send the headers now, as a server that starts streaming does.
    res.flushHeaders();
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (isClosed()) return;
      if (i === 2 && reply.malformed) return void res.end('data: {"id": "chatcmpl-broken", "choices": [{"index": 0, "delta": {"content": "x"\n\n');
      if (i === 2 && reply.streamError !== undefined) {
        return void res.end(`data: ${JSON.stringify({ error: { message: reply.streamError, type: 'server_error', param: null, code: null } })}\n\n`);
      }
      if (i === reply.stallAfterChunks) return;
      if (i === reply.dropAfterChunks) return void req.socket.destroy();
      res.write(`data: ${events[i]}\n\n`);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = req.url ?? '/';
    const route = path.split('?')[0];
    if (req.method === 'GET' && (route === '/v1/models' || route?.startsWith('/v1/models/'))) {
      const denied = authError(req);
      if (denied) return sendError(res, denied);
      if (route === '/v1/models') return sendJson(res, 200, { object: 'list', data: modelList().map(modelObject) });
      const name = decodeURIComponent(route.slice('/v1/models/'.length));
      if (!modelList().includes(name) && options.models) {
        return sendError(res, { status: 404, message: `The model '${name}' does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
      }
      return sendJson(res, 200, modelObject(name));
    }
    if (req.method !== 'POST' || route !== '/v1/chat/completions') {
      return sendError(res, { status: 404, message: `Invalid URL (${req.method} ${route})`, type: 'invalid_request_error', param: null, code: null });
    }

    let parsed: unknown;
    let parseFailed = false;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parseFailed = true;
    }
    const exchange = watchExchange(res);
    const record: RecordedChatRequest = {
      method: req.method,
      path,
      authorization: req.headers.authorization,
      headers: req.headers,
      raw,
      body: isObject(parsed) ? parsed : {},
      status: 0,
      ended: exchange.ended,
    };
    requests.push(record);
    const fail = (error: ApiError) => {
      record.status = error.status;
      sendError(res, error);
    };

    const denied = authError(req);
    if (denied) return fail(denied);
    if (!String(req.headers['content-type']).startsWith('application/json')) return fail(invalid('Unsupported content type; expected application/json.'));
    if (parseFailed) {
      return fail(
        invalid(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
        ),
      );
    }
    if (!isObject(parsed)) return fail(invalid(`Invalid type for body: expected an object, but got ${typeName(parsed)} instead.`));
    const problem = validate(parsed, options.models) ?? contextProblem(parsed, options.contextTokens);
    if (problem) return fail(problem);
    await complete(req, res, record, exchange.closed);
  };

  const loopback = await startLoopback(
    (req, res, body) => handle(req, res, body.toString('utf8')),
    (res, error) => sendJson(res, 500, { error: { message: String(error), type: 'server_error', param: null, code: null } }),
  );
  const { origin, port } = loopback;
  return {
    url: `${origin}/v1`,
    origin,
    port,
    requests,
    script(...replies) {
      queue.push(...replies);
    },
    get pending() {
      return queue.length;
    },
    lastRequest: () => requests[requests.length - 1],
    reset() {
      queue = [];
      requests.length = 0;
    },
    close: () => loopback.close(),
  };
}
