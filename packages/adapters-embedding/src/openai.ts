import { type EmbeddingModel, PlatformError } from '@agent-platform/core';
import OpenAI from 'openai';

export interface OpenAIEmbedderOptions {
  /** The server's model name, e.g. `text-embedding-3-small` or an Ollama model like `nomic-embed-text`. */
  readonly model: string;
  readonly apiKey?: string;
  /** e.g. `https://api.openai.com/v1` (default) or `http://127.0.0.1:11434/v1` for Ollama. */
  readonly baseURL?: string;
  /** Vector length; when not given, learned from the first response (`dimensions` is 0 until then). */
  readonly dimensions?: number;
  /** Texts per request. Default 64. */
  readonly batchSize?: number;
  /** Request timeout in ms. Default 60000. */
  readonly timeoutMs?: number;
  /** Retries of a failed request (429, 5xx, connection errors) by the client. Default 2. */
  readonly maxRetries?: number;
  /** A custom fetch (e.g. one that connects only to addresses the operator allowed). */
  readonly fetch?: typeof fetch;
}

const normalise = (values: ArrayLike<number>): Float32Array => {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
};

/** Embeddings from any server that speaks OpenAI's `/v1/embeddings` (OpenAI, Ollama, vLLM, LM Studio, ...). */
export function openaiEmbedder(options: OpenAIEmbedderOptions): EmbeddingModel {
  const client = new OpenAI({
    apiKey: options.apiKey ?? 'none',
    ...(options.baseURL ? { baseURL: options.baseURL } : {}),
    timeout: options.timeoutMs ?? 60_000,
    maxRetries: options.maxRetries ?? 2,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const batchSize = options.batchSize ?? 64;
  const upstream = options.baseURL ?? 'https://api.openai.com/v1';
  const model: EmbeddingModel & { dimensions: number } = {
    id: `openai:${options.model}`,
    dimensions: options.dimensions ?? 0,
    async embed(texts, opts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        const input = texts.slice(i, i + batchSize).map((t) => (t.trim() ? t : ' '));
        let response: OpenAI.CreateEmbeddingResponse;
        try {
          response = await client.embeddings.create(
            { model: options.model, input, ...(options.dimensions ? { dimensions: options.dimensions } : {}) },
            opts?.signal ? { signal: opts.signal } : {},
          );
        } catch (error) {
          if (error instanceof OpenAI.APIError) {
            const status = error.status ?? 0;
            throw new PlatformError('upstream_error', `Embedding server ${upstream} answered ${status || 'no response'}: ${error.message}`, {
              retryable: status === 429 || status >= 500 || status === 0,
              cause: error,
            });
          }
          throw error;
        }
        const data = [...response.data].sort((a, b) => a.index - b.index);
        if (data.length !== input.length) {
          throw new PlatformError('upstream_error', `Embedding server ${upstream} returned ${data.length} vectors for ${input.length} texts`);
        }
        for (const item of data) {
          const vector = normalise(item.embedding);
          if (model.dimensions === 0) model.dimensions = vector.length;
          if (vector.length !== model.dimensions) {
            throw new PlatformError('upstream_error', `Embedding server ${upstream} returned ${vector.length} dimensions, expected ${model.dimensions}`);
          }
          out.push(vector);
        }
      }
      return out;
    },
  };
  return model;
}
