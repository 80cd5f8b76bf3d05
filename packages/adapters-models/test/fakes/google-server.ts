import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { apiKeyInvalid, checkRequest, type GoogleApiError, invalidArgument, isGemini3, isObject, modelNotFound, scriptedError, signFunctionCall, tooLong, unregisteredCaller } from './google-wire.js';
import { startLoopback, watchExchange } from './loopback.js';

/**
 * A loopback stand-in for the Gemini API (`https://generativelanguage.googleapis.com/v1beta`),
 * speaking its documented wire format, with answers a test scripts. Node built-ins only.
 *
 * - The key is read from `x-goog-api-key` or `?key=`: none answers 403 PERMISSION_DENIED, a wrong
 *   one 400 INVALID_ARGUMENT with an `API_KEY_INVALID` ErrorInfo, as Google does.
 * - `POST /v1beta/models/{model}:generateContent` answers one `GenerateContentResponse`;
 *   `:streamGenerateContent?alt=sse` answers `text/event-stream` of `data: <GenerateContentResponse>`
 *   records separated by CRLF CRLF (without `alt=sse`, one JSON array of them). Each chunk has
 *   `candidates[0].content { role: 'model', parts }`, `usageMetadata` (running counts),
 *   `modelVersion` and `responseId`; the last has `finishReason` and `safetyRatings`. Thought
 *   parts (`{ text, thought: true }`) come first, then the text in pieces, then all function
 *   calls in one chunk (parallel calls are parts of one content). A model named like Gemini 3
 *   (`isGemini3`) signs the first function call of each answer (`thoughtSignature`) and refuses
 *   a request whose current turn (since the last user text) has a model content whose first call
 *   lacks its signature (400 "Function call is missing a thought_signature") or carries another
 *   one ("Corrupted thought signature"); Google's documented skip values pass.
 * - A blocked prompt answers `{ promptFeedback: { blockReason, safetyRatings }, usageMetadata }`
 *   and no candidates; a blocked answer ends with `finishReason: 'SAFETY'` and a rating with `blocked: true`.
 * - The body is checked as the API checks it (`google-wire.ts`), including the input token limit.
 * - `GET /v1beta/models` lists models in pages (`pageSize`, `pageToken`, `nextPageToken`);
 *   `GET /v1beta/models/{model}` answers one.
 * - Replies come from `script()`'s queue, else the default: `You said: <last user text>` (after
 *   function responses: `The function <name> returned: <response JSON>`).
 */

export type GeminiFinishReason = 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'RECITATION' | 'LANGUAGE' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT' | 'SPII' | 'MALFORMED_FUNCTION_CALL';

export interface GoogleScriptedReply {
  /** The answer's text, streamed word by word. */
  readonly text?: string;
  /**
   * Thought summaries, streamed before the text as `thought: true` parts when the request asks
   * for them (`generationConfig.thinkingConfig.includeThoughts`), as Gemini does; counted in
   * `thoughtsTokenCount` either way.
   */
  readonly reasoning?: string;
  /** Function calls, all parts of one content. `arguments`: a JSON text or an object. */
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string | Record<string, unknown>; readonly id?: string }[];
  /** Gemini's finish reason, or the suite's name for one (`stop`, `length`, `tool_calls`, `content_filter`). Default `STOP`. */
  readonly finishReason?: GeminiFinishReason | 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** Block the prompt: no candidates, `promptFeedback.blockReason` this. */
  readonly blockReason?: 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT' | 'IMAGE_SAFETY';
  /** Token counts. Default: counted. `null`: no `usageMetadata`. */
  readonly usage?: {
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly totalTokens?: number;
    readonly cachedPromptTokens?: number;
    readonly reasoningTokens?: number;
  } | null;
  /** Answer this HTTP status with Google's error body instead. */
  readonly status?: number;
  readonly errorMessage?: string;
  /** The RetryInfo `retryDelay` of a 429, e.g. `34.4s`. Default `1s`. */
  readonly retryDelay?: string;
  readonly delayMs?: number;
  readonly chunkDelayMs?: number;
  /** Never answer. */
  readonly hang?: boolean;
  /** After this many chunks, keep the connection open and send nothing more. */
  readonly stallAfterChunks?: number;
  /** After this many chunks, destroy the socket. */
  readonly dropAfterChunks?: number;
  /** After two chunks, send a record whose data is not JSON, then end. */
  readonly malformed?: boolean;
  /** After two chunks, send `data: {"error": {...}}` (500 INTERNAL) with this message, then end. */
  readonly streamError?: string;
}

export interface RecordedGoogleRequest {
  readonly method: string;
  /** Path and query, e.g. `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`. */
  readonly path: string;
  readonly model: string | undefined;
  /** The key it carried (header or `?key=`). */
  readonly apiKey: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
  status: number;
  readonly ended: Promise<'completed' | 'client_closed'>;
}

export interface FakeGoogleServerOptions {
  /** When set, the key every request must carry. */
  readonly apiKey?: string;
  /** Served models (ids without `models/`). Others answer 404. Default: any name; the list shows three. */
  readonly models?: readonly string[];
  /** The models' `inputTokenLimit`. Default 1,048,576. */
  readonly inputTokenLimit?: number;
}

export interface FakeGoogleServer {
  /** `http://127.0.0.1:<port>/v1beta`, a `baseURL`. */
  readonly url: string;
  readonly origin: string;
  /** Every request (listings and refused ones too), in order. */
  readonly requests: RecordedGoogleRequest[];
  script(...replies: GoogleScriptedReply[]): void;
  readonly pending: number;
  /** The last generate request. */
  lastRequest(): RecordedGoogleRequest | undefined;
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_MODELS = ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-2.0-flash'];
const RATINGS = ['HARM_CATEGORY_HATE_SPEECH', 'HARM_CATEGORY_DANGEROUS_CONTENT', 'HARM_CATEGORY_HARASSMENT', 'HARM_CATEGORY_SEXUALLY_EXPLICIT'];
const SUITE_REASONS: Record<string, GeminiFinishReason> = { stop: 'STOP', length: 'MAX_TOKENS', tool_calls: 'STOP', content_filter: 'SAFETY' };

const tokens = (text: string): number => text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;
const words = (text: string): string[] => (text === '' ? [] : text.split(/(?<=\s)(?=\S)/));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const randomId = (length: number) => randomBytes(length).toString('base64url').slice(0, length);

const partsOf = (content: unknown): Record<string, unknown>[] => (isObject(content) && Array.isArray(content.parts) ? (content.parts as Record<string, unknown>[]) : []);
const textOf = (content: unknown): string =>
  partsOf(content)
    .flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))
    .join('\n');

/** The default reply: echo the last user text, or report the last function responses. */
function echo(body: Record<string, unknown>): GoogleScriptedReply {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const last = contents[contents.length - 1];
  const responses = partsOf(last).flatMap((p) => (isObject(p.functionResponse) ? [p.functionResponse] : []));
  if (responses.length > 0) return { text: responses.map((r) => `The function ${String(r.name)} returned: ${JSON.stringify(r.response)}`).join(' ') };
  const user = [...contents].reverse().find((c) => isObject(c) && (c.role ?? 'user') === 'user' && textOf(c) !== '');
  return { text: `You said: ${textOf(user)}` };
}

/** The prompt's size as the fake counts it: words of the text, 258 per inline image (Gemini's figure). */
function promptTokens(body: Record<string, unknown>): number {
  const contents = [...(Array.isArray(body.contents) ? body.contents : []), body.systemInstruction];
  return contents.reduce<number>((sum, c) => sum + partsOf(c).reduce<number>((n, p) => n + (typeof p.text === 'string' ? tokens(p.text) : 0) + (p.inlineData ? 258 : 0), 0), 0);
}

/** The chunks of one answer; the last carries the finish reason. */
function chunksOf(reply: GoogleScriptedReply, body: Record<string, unknown>, model: string): Record<string, unknown>[] {
  const responseId = randomId(22);
  const prompt = promptTokens(body);
  const frame = (extra: Record<string, unknown>, usage: Record<string, unknown> | undefined): Record<string, unknown> => ({
    ...extra,
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: model,
    responseId,
  });
  const scripted = reply.usage;
  const usageFor = (completion: number, thoughts: number): Record<string, unknown> | undefined => {
    if (scripted === null) return undefined;
    const p = scripted?.promptTokens ?? prompt;
    const c = scripted?.completionTokens ?? completion;
    const t = scripted?.reasoningTokens ?? thoughts;
    return {
      promptTokenCount: p,
      ...(c > 0 || !reply.blockReason ? { candidatesTokenCount: c } : {}),
      totalTokenCount: scripted?.totalTokens ?? p + c + t,
      ...(scripted?.cachedPromptTokens ? { cachedContentTokenCount: scripted.cachedPromptTokens } : {}),
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: p }],
      ...(t > 0 ? { thoughtsTokenCount: t } : {}),
    };
  };
  if (reply.blockReason) {
    const safetyRatings = RATINGS.map((category, i) => ({ category, probability: i === 0 ? 'HIGH' : 'NEGLIGIBLE', ...(i === 0 ? { blocked: true } : {}) }));
    return [frame({ promptFeedback: { blockReason: reply.blockReason, safetyRatings } }, usageFor(0, 0))];
  }
  const thinking = isObject(body.generationConfig) && isObject(body.generationConfig.thinkingConfig) ? body.generationConfig.thinkingConfig : {};
  const thoughtPieces = thinking.includeThoughts === true ? words(reply.reasoning ?? '') : [];
  const hiddenThoughts = thinking.includeThoughts === true ? 0 : tokens(reply.reasoning ?? '');
  const textPieces = words(reply.text ?? '');
  // Gemini 3 signs the first function call of an answer (parallel calls after it go unsigned).
  const signs = isGemini3(model);
  const calls = (reply.toolCalls ?? []).map((c, i) => {
    const args = typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments;
    return { functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args }, ...(signs && i === 0 ? { thoughtSignature: signFunctionCall(c.name, args) } : {}) };
  });
  const pieces: Record<string, unknown>[][] = [...thoughtPieces.map((text) => [{ text, thought: true }]), ...textPieces.map((text) => [{ text }]), ...(calls.length > 0 ? [calls] : [])];
  const named = reply.finishReason ?? 'STOP';
  const finishReason = SUITE_REASONS[named] ?? (named as GeminiFinishReason);
  let completion = 0;
  let thoughts = hiddenThoughts;
  const chunks = pieces.map((parts) => {
    for (const part of parts) {
      if (part.thought) thoughts += tokens(String(part.text));
      else completion += typeof part.text === 'string' ? tokens(part.text) : tokens(JSON.stringify(part.functionCall));
    }
    return frame({ candidates: [{ content: { parts, role: 'model' }, index: 0 }] }, usageFor(completion, thoughts));
  });
  const blocked = finishReason === 'SAFETY';
  const safetyRatings = RATINGS.map((category, i) => ({ category, probability: blocked && i === 1 ? 'HIGH' : 'NEGLIGIBLE', ...(blocked && i === 1 ? { blocked: true } : {}) }));
  // The finish rides on the last content chunk, or on a chunk of its own when there is none.
  const last = chunks[chunks.length - 1];
  const candidate = last ? (last.candidates as Record<string, unknown>[])[0] : undefined;
  if (last && candidate) Object.assign(candidate, { finishReason, safetyRatings });
  else chunks.push(frame({ candidates: [{ ...(blocked ? {} : { content: { parts: [{ text: '' }], role: 'model' } }), finishReason, index: 0, safetyRatings }] }, usageFor(0, 0)));
  return chunks;
}

/** One whole `GenerateContentResponse` from the chunks of a streamed one. */
function merge(chunks: Record<string, unknown>[]): Record<string, unknown> {
  const last = chunks[chunks.length - 1] as Record<string, unknown>;
  if (!Array.isArray(last.candidates)) return last;
  // Pieces of text (and of thought) join into one part each, as the API answers them whole.
  const parts: Record<string, unknown>[] = [];
  for (const part of chunks.flatMap((c) => partsOf((c.candidates as Record<string, unknown>[])[0]?.content))) {
    const previous = parts[parts.length - 1];
    if (previous && typeof previous.text === 'string' && typeof part.text === 'string' && previous.thought === part.thought) previous.text += part.text;
    else parts.push({ ...part });
  }
  const candidate = (last.candidates as Record<string, unknown>[])[0] as Record<string, unknown>;
  return { ...last, candidates: [{ ...candidate, content: { parts, role: 'model' } }] };
}

/** Every part of a stream (a language model's `doStream`), in order. */
export async function drain<T>(stream: ReadableStream<T>): Promise<T[]> {
  const parts: T[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(next.value);
  return parts;
}

export async function startFakeGoogleServer(options: FakeGoogleServerOptions = {}): Promise<FakeGoogleServer> {
  const requests: RecordedGoogleRequest[] = [];
  let queue: GoogleScriptedReply[] = [];
  const served = options.models ?? DEFAULT_MODELS;
  const limit = options.inputTokenLimit ?? 1_048_576;

  const sendJson = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer', server: 'scaffolding on HTTPServer2' });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: ServerResponse, error: GoogleApiError) => sendJson(res, error.code, { error });
  const notFoundPage = (res: ServerResponse, path: string) => {
    res.writeHead(404, { 'content-type': 'text/html; charset=UTF-8' });
    res.end(
      `<!DOCTYPE html>\n<html lang=en><title>Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That’s an error.</ins><p>The requested URL <code>${path}</code> was not found on this server.  <ins>That’s all we know.</ins>`,
    );
  };
  const modelObject = (id: string) => ({
    name: `models/${id}`,
    version: '001',
    displayName: id.replace(/-/g, ' '),
    description: `The fake's ${id}`,
    inputTokenLimit: limit,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
    thinking: true,
  });
  /** The listing adds one embedding model, which a chat picker must leave out. */
  const listing = () => [...served.map(modelObject), { ...modelObject('gemini-embedding-001'), supportedGenerationMethods: ['embedContent', 'countTextTokens', 'countTokens'] }];

  const generate = async (req: IncomingMessage, res: ServerResponse, record: RecordedGoogleRequest, stream: boolean, sse: boolean, isClosed: () => boolean) => {
    const reply = queue.shift() ?? echo(record.body);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.hang || isClosed()) return;
    if (reply.status !== undefined) {
      record.status = reply.status;
      return sendError(res, scriptedError(reply.status, reply.errorMessage, reply.retryDelay));
    }
    const chunks = chunksOf(reply, record.body, record.model as string);
    if (!stream || !sse) {
      if (reply.dropAfterChunks !== undefined) return void req.socket.destroy();
      if (reply.stallAfterChunks !== undefined) return;
      if (reply.streamError !== undefined) return sendError(res, scriptedError(500, reply.streamError));
      record.status = 200;
      return sendJson(res, 200, stream ? chunks : merge(chunks));
    }
    record.status = 200;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-disposition': 'attachment', vary: 'Origin, X-Origin, Referer', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    for (let i = 0; i < chunks.length; i++) {
      if (i > 0 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (isClosed()) return;
      if (i === 2 && reply.malformed) return void res.end('data: {"candidates": [{"content": \r\n\r\n');
      if (i === 2 && reply.streamError !== undefined) return void res.end(`data: ${JSON.stringify({ error: scriptedError(500, reply.streamError) })}\r\n\r\n`);
      if (i === reply.stallAfterChunks) return;
      if (i === reply.dropAfterChunks) return void req.socket.destroy();
      res.write(`data: ${JSON.stringify(chunks[i])}\r\n\r\n`);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const route = /^\/v1beta\/models(?:\/([^/:]+)(?::(generateContent|streamGenerateContent))?)?$/.exec(url.pathname);
    const header = req.headers['x-goog-api-key'];
    const apiKey = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('key') ?? undefined;
    const model = route?.[1] ? decodeURIComponent(route[1]) : undefined;
    let parsed: unknown;
    try {
      parsed = raw === '' ? {} : JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    const exchange = watchExchange(res);
    const record: RecordedGoogleRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      model,
      apiKey,
      headers: req.headers,
      body: isObject(parsed) ? parsed : {},
      status: 0,
      ended: exchange.ended,
    };
    requests.push(record);
    const fail = (error: GoogleApiError) => {
      record.status = error.code;
      sendError(res, error);
    };
    const method = route?.[2];
    if (!route || (method ? req.method !== 'POST' : req.method !== 'GET')) {
      record.status = 404;
      return notFoundPage(res, url.pathname);
    }
    if (apiKey === undefined || apiKey === '') return fail(unregisteredCaller());
    if (options.apiKey !== undefined && apiKey !== options.apiKey) return fail(apiKeyInvalid());
    if (!method) {
      if (model && !served.includes(model)) return fail({ code: 404, message: `models/${model} is not found`, status: 'NOT_FOUND' });
      record.status = 200;
      if (model) return sendJson(res, 200, modelObject(model));
      const size = Math.min(Math.max(Number(url.searchParams.get('pageSize')) || 50, 1), 1000);
      const start = Number(url.searchParams.get('pageToken') ?? 0) || 0;
      const all = listing();
      const page = all.slice(start, start + size);
      return sendJson(res, 200, { models: page, ...(start + size < all.length ? { nextPageToken: String(start + size) } : {}) });
    }
    if (!served.includes(model as string) && options.models) return fail(modelNotFound(model as string, method === 'generateContent' ? 'generateContent' : 'streamGenerateContent'));
    if (parsed === undefined) return fail(invalidArgument(`Invalid JSON payload received. Unexpected token.\n${raw.slice(0, 40)}\n^`));
    if (!isObject(parsed)) return fail(invalidArgument(`Invalid JSON payload received. Expected an object.`));
    const problem = checkRequest(parsed, model as string);
    if (problem) return fail(problem);
    const count = promptTokens(parsed);
    if (count > limit) return fail(tooLong(count, limit));
    await generate(req, res, record, method === 'streamGenerateContent', url.searchParams.get('alt') === 'sse', exchange.closed);
  };

  const loopback = await startLoopback(
    (req, res, body) => handle(req, res, body.toString('utf8')),
    (res, error) => sendJson(res, 500, { error: { code: 500, message: String(error), status: 'INTERNAL' } }),
  );
  const origin = loopback.origin;
  return {
    url: `${origin}/v1beta`,
    origin,
    requests,
    script: (...replies) => void queue.push(...replies),
    get pending() {
      return queue.length;
    },
    lastRequest: () => [...requests].reverse().find((r) => r.method === 'POST'),
    reset() {
      queue = [];
      requests.length = 0;
    },
    close: () => loopback.close(),
  };
}
