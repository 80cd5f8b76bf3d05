import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type EmbeddingModel, PlatformError } from '@agent-platform/core';
import { type Dtype, insideFolder, type ModelError, modelErrors, onnxFile, type Transformers, transformers, withEnv } from './transformers-runtime.js';

type Pipeline = Awaited<ReturnType<Transformers['pipeline']>> & {
  tokenizer: import('@huggingface/transformers').PreTrainedTokenizer;
  model: import('@huggingface/transformers').PreTrainedModel;
};

/** How token vectors become one text vector. */
export type TransformersPooling = 'mean' | 'cls' | 'max' | 'last';

export interface TransformersEmbedderOptions {
  /**
   * A local model folder (absolute, or relative to the working directory) as transformers.js
   * expects it: `config.json`, `tokenizer.json` + `tokenizer_config.json`, and
   * `onnx/model.onnx` (or the file of `dtype`, e.g. `onnx/model_quantized.onnx` for `q8`).
   * Loaded offline: nothing is ever downloaded for a local folder.
   */
  readonly model: string;
  /** The embedder's id. Default `local:<folder basename>-<dimensions>`. */
  readonly id?: string;
  /** Pooling; default from the folder's sentence-transformers config (`modules.json`, `1_Pooling/config.json`), else `mean`. */
  readonly pooling?: TransformersPooling;
  /** Tokens per text (special tokens included), at most the model's own limit. Default the model's limit. */
  readonly maxLength?: number;
  /** Texts per model call (texts are grouped by length first). Default 16. */
  readonly batchSize?: number;
  /** ONNX weights variant: `fp32` (default, `onnx/model.onnx`), `fp16`, `q8`, `int8`, `uint8`, `q4`, `bnb4`, `q4f16`. */
  readonly dtype?: Dtype;
  /** ONNX Runtime intra-op threads. Default: ONNX Runtime's (the machine's cores). */
  readonly threads?: number;
  /** transformers.js' file cache (not used for local folders; given so that nothing is written inside node_modules). */
  readonly cacheDir?: string;
  /**
   * How messages name the model folder (they reach API callers): default the folder's name.
   * The server passes its place in the data folder (`models/<name>`): never an absolute path.
   */
  readonly label?: string;
}

/** What the embedder read from the model folder. */
export interface TransformersModelInfo {
  /** Absolute path of the model folder. */
  readonly folder: string;
  /** `model_type` of config.json, e.g. `bert`. */
  readonly modelType: string;
  /** Hidden size of the model: the length of every vector. */
  readonly dimensions: number;
  readonly pooling: TransformersPooling;
  /** Whether the model's own config normalises its vectors (a sentence-transformers Normalize module). The embedder's vectors are unit length either way. */
  readonly normalize: boolean;
  /** Tokens per text, special tokens included. */
  readonly maxLength: number;
}

export interface TransformersEmbeddingModel extends EmbeddingModel {
  readonly info: TransformersModelInfo;
  /** Frees the ONNX session. Idempotent; a later `embed` loads the model again. */
  close(): Promise<void>;
}

function readJson(folder: string, file: string, required: boolean, invalidModel: ModelError): Record<string, unknown> | undefined {
  const path = insideFolder(folder, file);
  if (!path) throw invalidModel(`names a file outside the folder: "${file}"`);
  if (!existsSync(path)) {
    if (required) throw invalidModel(`is not a transformers.js model folder: it has no ${file}`);
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw invalidModel(`has an unreadable ${file}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    if (file === 'modules.json' && Array.isArray(value)) return { modules: value };
    throw invalidModel(`has an invalid ${file}: not a JSON object`);
  }
  return value as Record<string, unknown>;
}

const positiveInt = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

/**
 * Reads a model folder's configuration: hidden size (config.json), pooling and normalisation
 * (sentence-transformers `modules.json` and its Pooling module's config; default mean and
 * normalise) and the maximum input length (the smallest of sentence_bert_config.json's
 * `max_seq_length`, tokenizer_config.json's `model_max_length` and config.json's
 * `max_position_embeddings`, default 512). Throws `invalid_request` naming the folder.
 */
export function readModelFolder(model: string, dtype: Dtype = 'fp32', label?: string): TransformersModelInfo {
  const folder = resolve(model);
  const invalidModel = modelErrors(folder, label ?? basename(folder));
  let stat: ReturnType<typeof statSync> | undefined;
  try {
    stat = statSync(folder);
  } catch {
    throw invalidModel('does not exist');
  }
  if (!stat.isDirectory()) throw invalidModel('is not a folder');
  const config = readJson(folder, 'config.json', true, invalidModel) as Record<string, unknown>;
  if (!existsSync(join(folder, 'tokenizer.json'))) throw invalidModel('is not a transformers.js model folder: it has no tokenizer.json');
  const tokenizerConfig = readJson(folder, 'tokenizer_config.json', false, invalidModel) ?? {};
  if (!existsSync(join(folder, onnxFile(dtype)))) throw invalidModel(`is not a transformers.js model folder: it has no ${onnxFile(dtype)}`);
  const modelType = typeof config.model_type === 'string' ? config.model_type : '';
  if (!modelType) throw invalidModel('has an invalid config.json: no model_type');
  const dimensions = positiveInt(config.hidden_size) ?? positiveInt(config.d_model) ?? positiveInt(config.dim) ?? positiveInt(config.n_embd);
  if (!dimensions) throw invalidModel('has an invalid config.json: no hidden_size');

  // sentence-transformers: modules.json lists the modules; the Pooling module's folder has its config.
  let pooling: TransformersPooling = 'mean';
  let normalize = true;
  const modules = readJson(folder, 'modules.json', false, invalidModel)?.modules;
  if (Array.isArray(modules)) {
    const types = modules.map((m) => String((m as { type?: unknown }).type ?? ''));
    normalize = types.some((t) => t.endsWith('.Normalize'));
    const poolingModule = modules.find((m) => String((m as { type?: unknown }).type ?? '').endsWith('.Pooling')) as { path?: unknown } | undefined;
    const poolingConfig = poolingModule && typeof poolingModule.path === 'string' ? readJson(folder, join(poolingModule.path, 'config.json'), false, invalidModel) : undefined;
    if (poolingConfig) {
      const modes = (
        [
          ['cls', poolingConfig.pooling_mode_cls_token],
          ['mean', poolingConfig.pooling_mode_mean_tokens],
          // sum / sqrt(length) has the direction of the mean: the same unit vector.
          ['mean', poolingConfig.pooling_mode_mean_sqrt_len_tokens],
          ['max', poolingConfig.pooling_mode_max_tokens],
          ['last', poolingConfig.pooling_mode_lasttoken],
        ] as const
      )
        .filter(([, on]) => on === true)
        .map(([mode]) => mode);
      const distinct = [...new Set(modes)];
      if (distinct.length > 1) throw invalidModel(`combines pooling modes (${distinct.join(', ')}), which is not supported`);
      if (distinct[0]) pooling = distinct[0];
    }
  }
  const sbert = readJson(folder, 'sentence_bert_config.json', false, invalidModel);
  // RoBERTa-like models count two extra positions (padding offset) in max_position_embeddings.
  const positions = positiveInt(config.max_position_embeddings);
  const offset = /roberta|camembert|longformer/.test(modelType) ? 2 : 0;
  const limits = [positiveInt(sbert?.max_seq_length), positiveInt(tokenizerConfig.model_max_length), positions ? positions - offset : undefined].filter(
    // tokenizer_config.json says 1e30 when it does not know.
    (n): n is number => n !== undefined && n > 0 && n < 1_000_000,
  );
  const maxLength = limits.length ? Math.min(...limits) : 512;
  return { folder, modelType, dimensions, pooling, normalize, maxLength };
}

const refuseFetch = async (input: string | URL): Promise<never> => {
  throw new Error(`network access refused while loading a local model (${String(input)})`);
};

/**
 * Any ONNX sentence-embedding model (BGE, MiniLM, E5, GTE, nomic, ...) from a local folder, run
 * in-process by `@huggingface/transformers` on `onnxruntime-node` (CPU). Offline: the folder
 * is loaded with `local_files_only`, `env.allowRemoteModels = false` and a fetch that refuses.
 * Id `local:<folder basename>-<dimensions>` unless given. Inputs are tokenized by the model's
 * tokenizer and truncated to its maximum length (keeping the closing special token); pooling
 * follows the model's sentence-transformers config (default mean); vectors are unit length.
 * The folder's configuration is read (and checked) when the embedder is made; the model is
 * loaded on the first `embed`. Throws `invalid_request` naming the folder when it is missing
 * or not a model folder.
 */
export function transformersEmbedder(options: TransformersEmbedderOptions): TransformersEmbeddingModel {
  if (!options.model) throw PlatformError.invalid('transformersEmbedder: model (a folder) is required');
  const limit = (name: string, value: number | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < 1) throw PlatformError.invalid(`transformersEmbedder: ${name} must be a positive integer`);
    return value;
  };
  const batchSize = limit('batchSize', options.batchSize, 16);
  const threads = options.threads === undefined ? undefined : limit('threads', options.threads, 1);
  const dtype = options.dtype ?? 'fp32';
  const read = readModelFolder(options.model, dtype, options.label);
  const maxLength = Math.min(read.maxLength, limit('maxLength', options.maxLength, read.maxLength));
  if (maxLength < 2) throw PlatformError.invalid('transformersEmbedder: maxLength must be at least 2');
  const info: TransformersModelInfo = { ...read, maxLength, pooling: options.pooling ?? read.pooling };
  const { folder, dimensions } = info;
  const invalidModel = modelErrors(folder, options.label ?? basename(folder));
  const id = options.id ?? `local:${basename(folder)}-${dimensions}`;
  // A token covers a few characters; cutting far beyond the window first bounds the tokenizer's work.
  const maxChars = maxLength * 32;

  let loading: Promise<Pipeline> | undefined;
  const load = (): Promise<Pipeline> => {
    loading ??= withEnv(
      (env) => {
        env.allowRemoteModels = false;
        env.allowLocalModels = true;
        env.localModelPath = dirname(folder);
        env.fetch = refuseFetch;
      },
      async () => {
        const { pipeline } = await transformers();
        try {
          return (await pipeline('feature-extraction', folder, {
            local_files_only: true,
            dtype,
            device: 'cpu',
            ...(options.cacheDir ? { cache_dir: options.cacheDir } : {}),
            ...(threads ? { session_options: { intraOpNumThreads: threads } } : {}),
          })) as Pipeline;
        } catch (error) {
          throw invalidModel(`could not be loaded: ${error instanceof Error ? error.message : String(error)}`, error);
        }
      },
    );
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };

  const tokenize = (pipe: Pipeline, texts: readonly string[]): number[][] => {
    const tokenizer = pipe.tokenizer;
    const special = new Set(tokenizer.all_special_ids);
    return texts.map((text) => {
      const { input_ids } = tokenizer(text.length > maxChars ? text.slice(0, maxChars) : text, { return_tensor: false }) as unknown as { input_ids: number[] };
      if (input_ids.length <= maxLength) return input_ids;
      const last = input_ids[input_ids.length - 1] as number;
      // Keep the closing special token ([SEP], </s>) as the model was trained with it.
      return special.has(last) ? [...input_ids.slice(0, maxLength - 1), last] : input_ids.slice(0, maxLength);
    });
  };

  const run = async (pipe: Pipeline, batch: number[][]): Promise<Float32Array[]> => {
    const { Tensor } = await transformers();
    const length = Math.max(...batch.map((ids) => ids.length));
    const pad = BigInt(pipe.tokenizer.pad_token_id ?? 0);
    const ids = new BigInt64Array(batch.length * length).fill(pad);
    const mask = new BigInt64Array(batch.length * length);
    batch.forEach((tokens, b) => {
      tokens.forEach((token, t) => {
        ids[b * length + t] = BigInt(token);
        mask[b * length + t] = 1n;
      });
    });
    const shape = [batch.length, length];
    const outputs = (await pipe.model({ input_ids: new Tensor('int64', ids, shape), attention_mask: new Tensor('int64', mask, shape) })) as Record<
      string,
      { dims: number[]; data: Float32Array } | undefined
    >;
    const hidden = outputs.last_hidden_state ?? outputs.token_embeddings;
    if (hidden?.dims.length !== 3) throw invalidModel('gave no last_hidden_state (a [batch, tokens, hidden] output)');
    const size = hidden.dims[2] as number;
    if (size !== dimensions) throw invalidModel(`gave vectors of ${size} values, but its config.json says hidden size ${dimensions}`);
    const data = hidden.data;
    return batch.map((tokens, b) => {
      const vector = new Float32Array(size);
      const row = (t: number) => (b * length + t) * size;
      if (info.pooling === 'cls' || info.pooling === 'last') {
        const at = row(info.pooling === 'cls' ? 0 : tokens.length - 1);
        vector.set(data.subarray(at, at + size));
      } else if (info.pooling === 'max') {
        vector.fill(Number.NEGATIVE_INFINITY);
        for (let t = 0; t < tokens.length; t++) for (let i = 0; i < size; i++) vector[i] = Math.max(vector[i] as number, data[row(t) + i] as number);
      } else {
        for (let t = 0; t < tokens.length; t++) for (let i = 0; i < size; i++) (vector[i] as number) += data[row(t) + i] as number;
        for (let i = 0; i < size; i++) (vector[i] as number) /= Math.max(1, tokens.length);
      }
      let norm = 0;
      for (const x of vector) norm += x * x;
      norm = Math.sqrt(norm);
      if (!(norm > 0) || !Number.isFinite(norm)) throw new PlatformError('internal', `Embedding model ${id} gave a zero or invalid vector`);
      for (let i = 0; i < size; i++) (vector[i] as number) /= norm;
      return vector;
    });
  };

  return {
    id,
    dimensions,
    info,
    async embed(texts, embedOptions) {
      const signal = embedOptions?.signal;
      signal?.throwIfAborted();
      if (texts.length === 0) return [];
      const pipe = await load();
      signal?.throwIfAborted();
      const tokens = tokenize(pipe, texts);
      // Batches of similar lengths pad little.
      const order = tokens.map((_, i) => i).sort((a, b) => (tokens[a] as number[]).length - (tokens[b] as number[]).length);
      const vectors: Float32Array[] = new Array(texts.length);
      for (let start = 0; start < order.length; start += batchSize) {
        signal?.throwIfAborted();
        const slice = order.slice(start, start + batchSize);
        const out = await run(
          pipe,
          slice.map((i) => tokens[i] as number[]),
        );
        slice.forEach((i, k) => {
          vectors[i] = out[k] as Float32Array;
        });
      }
      return vectors;
    },
    async close() {
      const pending = loading;
      loading = undefined;
      if (!pending) return;
      const pipe = await pending.catch(() => undefined);
      await pipe?.dispose();
    },
  };
}
