import { type ByteLimit, DEFAULT_UPSTREAM_LIMITS, type EmbeddingModel, isPlatformError, PlatformError } from '@agent-platform/core';
import { answerTooLargeIn, boundedFetch, displayUrl, isUnresolvedHost, safeReason, unreachableAs } from '@agent-platform/core/internal';
import OpenAI from 'openai';
import { tokenCounter } from './token-counter.js';

export interface OpenAIEmbedderOptions {
  /** The server's model name, e.g. `text-embedding-3-small`, or an Ollama model like `nomic-embed-text`. */
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Local servers (Ollama, vLLM) usually need none. */
  readonly apiKey?: string;
  /** e.g. `https://api.openai.com/v1` (default) or `http://127.0.0.1:11434/v1` for Ollama. */
  readonly baseURL?: string;
  /**
   * Vector length. When given, it is also sent as the request's `dimensions` (text-embedding-3
   * models shorten their vectors; models that cannot answer 400). When not given, it is learned
   * from the first response: `dimensions` is 0 until the first successful `embed`.
   */
  readonly dimensions?: number;
  /** Texts per request, at most 2048 (OpenAI's limit). Default 64. */
  readonly batchSize?: number;
  /**
   * Tokens of one text (counted with cl100k_base, the tokenizer of OpenAI's embedding models,
   * on a worker thread shared by every openai embedder of the process); longer texts are
   * truncated to this. Default 8191 (OpenAI's limit is 8192).
   */
  readonly maxInputTokens?: number;
  /** Tokens of all texts of one request; a batch is split before it. Default 300000 (OpenAI's limit). */
  readonly maxRequestTokens?: number;
  /** Wire encoding of the vectors. Default `base64` (the client's default; it decodes them). */
  readonly encodingFormat?: 'base64' | 'float';
  /** Request timeout in ms. Default 60000. */
  readonly timeoutMs?: number;
  /** Retries of a failed request (408, 409, 429, 5xx, connection errors) by the client, with backoff. Default 2. */
  readonly maxRetries?: number;
  /** A custom fetch (e.g. one that connects only to addresses the operator allowed). */
  readonly fetch?: typeof fetch;
  /**
   * Most bytes of one answer of the server (a batch of vectors), enforced while reading: past it
   * the server is cut off and the call fails with `upstream_error` naming `setting`. Default
   * 16 MiB (`DEFAULT_UPSTREAM_LIMITS.embeddingsAnswerBytes`): 64 texts of 3,072 dimensions take
   * about 4 MB as JSON numbers, 1 MB as base64.
   */
  readonly answerLimit?: ByteLimit;
}

function unit(values: ArrayLike<number>, upstream: string): Float32Array {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += (values[i] as number) ** 2;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) {
    throw new PlatformError('upstream_error', `Embedding upstream ${upstream} returned a zero or invalid vector`);
  }
  const vector = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) vector[i] = (values[i] as number) / norm;
  return vector;
}

/** Drops `user:password@` from URLs quoted in a message (fetch quotes the URL it refuses). */
const redact = (message: string): string => message.replace(/\/\/[^/@\s]+@/g, '//');

function upstreamError(error: unknown, upstream: string, hasKey: boolean, timeoutMs: number): PlatformError | undefined {
  const tooLarge = answerTooLargeIn(error);
  if (tooLarge) return tooLarge;
  if (!(error instanceof OpenAI.APIError)) return undefined;
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new PlatformError('upstream_error', `Embedding upstream ${upstream} did not answer within ${timeoutMs} ms`, {
      retryable: true,
      details: { upstream },
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIConnectionError || error.status === undefined) {
    // The fetch refused the address (the outbound policy): its answer as it is.
    if (isUnresolvedHost(error.cause)) return unreachableAs(`Embedding upstream ${upstream} could not be reached`, error.cause);
    if (isPlatformError(error.cause)) return error.cause;
    const reason = redact(error.cause instanceof Error ? error.cause.message : error.message);
    return new PlatformError('upstream_error', `Embedding upstream ${upstream} could not be reached: ${reason}`, {
      retryable: true,
      details: { upstream },
      cause: error,
    });
  }
  // The status and, where the server gave one, its error code: never the body's text.
  const status = error.status;
  const reason = safeReason(error.error);
  const message =
    status === 401 || status === 403
      ? `Embedding upstream ${upstream} refused the credentials (HTTP ${status})${reason}${hasKey ? '' : ' (no API key was configured)'}`
      : `Embedding upstream ${upstream} answered HTTP ${status}${reason}`;
  return new PlatformError('upstream_error', message, {
    retryable: status === 408 || status === 409 || status === 429 || status >= 500,
    details: { upstream, status },
    cause: error,
  });
}

/**
 * Embeddings from any server that speaks OpenAI's `POST /v1/embeddings` (OpenAI, Azure
 * OpenAI's v1 API, Ollama, vLLM, LM Studio, ...), over the official `openai` client. Id
 * `openai:<model>`. Vectors are normalised to unit length. Long texts are truncated to
 * `maxInputTokens`; batches respect OpenAI's per-request limits. Tokens are counted off the
 * main thread, on one worker thread of the process that every openai embedder shares, started
 * by the first call that needs a count (short texts need none) and stopped by the last
 * embedder's `close()`; while idle it never keeps the process alive. Failures of the server are
 * `PlatformError('upstream_error')` naming the server and its status, retryable for 408, 409,
 * 429, 5xx and connection errors (after the client's own retries).
 */
export function openaiEmbedder(options: OpenAIEmbedderOptions): EmbeddingModel {
  const limit = (name: string, value: number | undefined, fallback: number, max = Number.POSITIVE_INFINITY) => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw PlatformError.invalid(`openaiEmbedder: ${name} must be an integer from 1 to ${max}`);
    }
    return value;
  };
  if (!options.model) throw PlatformError.invalid('openaiEmbedder: model is required');
  const batchSize = limit('batchSize', options.batchSize, 64, 2048);
  const maxInputTokens = limit('maxInputTokens', options.maxInputTokens, 8191);
  const maxRequestTokens = limit('maxRequestTokens', options.maxRequestTokens, 300_000);
  if (options.dimensions !== undefined) limit('dimensions', options.dimensions, 0);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const baseURL = options.baseURL ?? 'https://api.openai.com/v1';
  const answerLimit = options.answerLimit ?? { bytes: DEFAULT_UPSTREAM_LIMITS.embeddingsAnswerBytes, setting: 'the answerLimit option of the embedder' };
  const client = new OpenAI({
    // The client insists on a key; local servers ignore this placeholder.
    apiKey: options.apiKey ?? 'none',
    baseURL,
    timeout: timeoutMs,
    maxRetries: options.maxRetries ?? 2,
    fetch: boundedFetch(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), {
      maxBytes: answerLimit.bytes,
      subject: `Embedding upstream ${displayUrl(baseURL)}`,
      setting: answerLimit.setting,
    }),
  });
  const upstream = displayUrl(client.baseURL);
  let dimensions = options.dimensions ?? 0;
  const counter = tokenCounter();

  const request = async (input: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> => {
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await client.embeddings.create(
        {
          model: options.model,
          input,
          ...(options.dimensions ? { dimensions: options.dimensions } : {}),
          ...(options.encodingFormat ? { encoding_format: options.encodingFormat } : {}),
        },
        signal ? { signal } : {},
      );
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw upstreamError(error, upstream, options.apiKey !== undefined, timeoutMs) ?? error;
    }
    const data = (response as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(data)) {
      throw new PlatformError('upstream_error', `Embedding upstream ${upstream} answered with an unexpected body (no data list)`);
    }
    if (data.length !== input.length) {
      throw new PlatformError('upstream_error', `Embedding upstream ${upstream} returned ${data.length} vectors for ${input.length} texts`);
    }
    const vectors = new Array<Float32Array | undefined>(input.length);
    for (const item of data as OpenAI.Embedding[]) {
      // `embedding` is a number[] (float) or, decoded by the client from base64, a Float32Array.
      const values: unknown = item?.embedding;
      if (!Number.isInteger(item?.index) || item.index < 0 || item.index >= input.length || vectors[item.index]) {
        throw new PlatformError('upstream_error', `Embedding upstream ${upstream} returned a bad or repeated index`);
      }
      if (!Array.isArray(values) && !(values instanceof Float32Array)) {
        throw new PlatformError('upstream_error', `Embedding upstream ${upstream} returned an embedding that is not a list of numbers`);
      }
      const vector = unit(values as ArrayLike<number>, upstream);
      if (dimensions === 0) dimensions = vector.length;
      if (vector.length !== dimensions) {
        throw new PlatformError('upstream_error', `Embedding upstream ${upstream} returned ${vector.length} dimensions, expected ${dimensions}`);
      }
      vectors[item.index] = vector;
    }
    return vectors as Float32Array[];
  };

  return {
    id: `openai:${options.model}`,
    get dimensions() {
      return dimensions;
    },
    async embed(texts, opts) {
      const signal = opts?.signal;
      signal?.throwIfAborted();
      const clipped = await counter.clip(texts, {
        maxInputTokens,
        maxTotalTokens: maxRequestTokens,
        signal,
        kind: opts?.purpose === 'query' ? 'query' : 'bulk',
      });
      const out: Float32Array[] = [];
      let batch: string[] = [];
      let tokens = 0;
      for (const c of clipped) {
        if (batch.length > 0 && (batch.length >= batchSize || tokens + c.tokens > maxRequestTokens)) {
          out.push(...(await request(batch, signal)));
          batch = [];
          tokens = 0;
        }
        batch.push(c.text);
        tokens += c.tokens;
      }
      if (batch.length > 0) out.push(...(await request(batch, signal)));
      return out;
    },
    // The client holds nothing beyond fetch's shared connection pool; the token counter's worker
    // is shared, and stops with its last holder.
    close: () => counter.close(),
  };
}
