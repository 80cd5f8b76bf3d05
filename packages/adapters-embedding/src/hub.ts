import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type EmbeddingModel, isPlatformError, PlatformError } from '@agent-platform/core';
import { relativePaths } from '@agent-platform/core/internal';
import { type TransformersEmbedderOptions, type TransformersEmbeddingModel, transformersEmbedder } from './transformers-model.js';
import { type Dtype, insideFolder, modelErrors, onnxFile, transformers, withEnv } from './transformers-runtime.js';

// Models from the Hugging Face hub, downloaded into a cache folder and then used as local folders.

export interface TransformersHubOptions extends Omit<TransformersEmbedderOptions, 'model'> {
  /** A Hugging Face hub model id with ONNX weights in transformers.js' layout, e.g. `Xenova/all-MiniLM-L6-v2` or `Xenova/bge-base-en-v1.5`. */
  readonly model: string;
  /** Where downloaded models are kept (transformers.js' file cache layout: `<cacheDir>/<owner>/<name>/...`). Required. */
  readonly cacheDir: string;
  /** Hub revision (branch, tag or commit). Default `main`. */
  readonly revision?: string;
  /** Download when the model is not in `cacheDir` yet. Default true; false only uses the cache. */
  readonly download?: boolean;
  /** The hub. Default transformers.js' `env.remoteHost` (`https://huggingface.co/`). */
  readonly remoteHost?: string;
  /**
   * The fetch of every download request (transformers.js' own and this module's): the
   * platform's guarded fetch, so the hub and every redirect it answers (to its CDN) obey the
   * outbound policy. Default: the global fetch.
   */
  readonly fetch?: (input: string | URL, init?: RequestInit) => Promise<Response>;
}

/** One part of a hub id or a revision: letters, digits, `_`, `-` and `.`, not only dots, no `..`. */
const HUB_PART = /^(?!\.+$)(?!.*\.\.)[\w.-]+$/;

/**
 * The folder under `cacheDir` that holds (or will hold) a hub model: `<cacheDir>/<owner>/<name>`
 * (and `/<revision>` for another revision than `main`), as transformers.js' file cache lays it
 * out. Throws `invalid_request` for an id or revision that is not plain names, and for any
 * folder that would not lie inside `cacheDir`.
 */
export function hubModelFolder(cacheDir: string, model: string, revision = 'main'): string {
  const parts = model.split('/');
  if (parts.length !== 2 || !parts.every((part) => HUB_PART.test(part))) throw PlatformError.invalid(`Invalid Hugging Face model id "${model}": expected <owner>/<name>`);
  if (!HUB_PART.test(revision)) throw PlatformError.invalid(`Invalid Hugging Face revision "${revision}"`);
  const folder = insideFolder(cacheDir, revision === 'main' ? model : join(model, revision));
  if (!folder) throw PlatformError.invalid(`Invalid Hugging Face model id "${model}": its folder would not be inside the cache`);
  return folder;
}

/** Whether the cache holds a hub model completely (config, tokenizer and the ONNX weights of `dtype`), so it needs no download. */
export function isHubModelCached(cacheDir: string, model: string, options: { readonly revision?: string; readonly dtype?: Dtype } = {}): boolean {
  const folder = hubModelFolder(cacheDir, model, options.revision);
  return ['config.json', 'tokenizer.json', onnxFile(options.dtype ?? 'fp32')].every((file) => existsSync(join(folder, file)));
}

/**
 * Downloads a hub model into its folder under `cacheDir` unless the folder is complete already:
 * transformers.js fetches `config.json`, the tokenizer files and the ONNX weights of `dtype`
 * into its file cache (`<cacheDir>/<owner>/<name>[/<revision>]/...`), and the
 * sentence-transformers files that choose pooling (`modules.json`, the Pooling module's
 * `config.json`, `sentence_bert_config.json`) are fetched next to them when the repository has
 * them. Every file is written inside the model's folder (a path the repository names that would
 * lead elsewhere fails the download), and every request goes through `options.fetch`. Returns
 * the folder.
 */
export async function downloadHubModel(options: TransformersHubOptions): Promise<string> {
  const { cacheDir, revision = 'main', download = true, remoteHost } = options;
  const dtype = options.dtype ?? 'fp32';
  const folder = hubModelFolder(cacheDir, options.model, revision);
  const label = options.label ?? options.model;
  const invalidModel = modelErrors(folder, label);
  const complete = () => isHubModelCached(cacheDir, options.model, { revision, dtype });
  if (complete()) return folder;
  const fetchFile = options.fetch ?? ((input, init) => fetch(input, init));
  if (!download) throw invalidModel(`does not hold ${options.model} yet (downloads are off)`);
  await withEnv(
    (env) => {
      env.allowRemoteModels = true;
      env.allowLocalModels = false;
      if (remoteHost) env.remoteHost = remoteHost;
      env.fetch = fetchFile;
    },
    async () => {
      const { pipeline, env } = await transformers();
      try {
        const pipe = await pipeline('feature-extraction', options.model, { cache_dir: resolve(cacheDir), revision, dtype, device: 'cpu' });
        await pipe.dispose();
        const base = `${env.remoteHost.replace(/\/+$/, '')}/${options.model}/resolve/${encodeURIComponent(revision)}/`;
        const fetchOptional = async (file: string): Promise<string | undefined> => {
          // The repository names these files (modules.json): each must stay inside the model's folder.
          const path = insideFolder(folder, file);
          if (!path) throw PlatformError.invalid(`the repository names a file outside the model folder: "${file}"`);
          const url = base + file.split('/').map(encodeURIComponent).join('/');
          const response = await fetchFile(url);
          if (response.status === 404) return undefined;
          if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
          const text = await response.text();
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, text);
          return text;
        };
        await fetchOptional('sentence_bert_config.json');
        const modules = await fetchOptional('modules.json');
        const listed: unknown = modules === undefined ? undefined : JSON.parse(modules);
        const pooling = Array.isArray(listed) ? (listed as { type?: unknown; path?: unknown }[]).find((m) => String(m?.type ?? '').endsWith('.Pooling')) : undefined;
        if (typeof pooling?.path === 'string' && pooling.path !== '') await fetchOptional(`${pooling.path}/config.json`);
      } catch (error) {
        // A refusal (the outbound policy, a path outside the folder) stays one; the rest is the hub's failure.
        const refused = isPlatformError(error) && error.code === 'invalid_request';
        const reason = relativePaths(folder, label)(error instanceof Error ? error.message : String(error));
        throw new PlatformError(refused ? 'invalid_request' : 'upstream_error', `Could not download ${options.model} from the Hugging Face hub into ${label}: ${reason}`, {
          retryable: !refused,
          details: { model: options.model, folder: label },
          cause: error,
        });
      }
    },
  );
  if (!complete()) throw invalidModel(`is incomplete after downloading ${options.model}`);
  return folder;
}

/**
 * A model from the Hugging Face hub by id (`Xenova/all-MiniLM-L6-v2`, `Xenova/bge-base-en-v1.5`,
 * ...: repositories with ONNX weights in transformers.js' layout), kept in `cacheDir`. Id
 * `hf:<model>`. When the model's folder in the cache is complete it is used offline, as a
 * local folder; otherwise the first `embed` downloads it (`downloadHubModel`). `dimensions` is
 * read from the cached config.json, so it is 0 until the model is in the cache (like an
 * OpenAI-compatible embedder learning it from its first answer). The first use of a model not
 * in the cache downloads it (`downloadHubModel`), unless `download` is false.
 */
export function transformersHubEmbedder(options: TransformersHubOptions): EmbeddingModel & { close(): Promise<void> } {
  const { cacheDir, revision = 'main', download, remoteHost, ...rest } = options;
  const folder = hubModelFolder(cacheDir, options.model, revision);
  const id = rest.id ?? `hf:${options.model}${revision === 'main' ? '' : `@${revision}`}`;
  const open = () => transformersEmbedder({ ...rest, model: folder, id, label: rest.label ?? options.model });
  let inner: TransformersEmbeddingModel | undefined = existsSync(join(folder, 'config.json')) ? open() : undefined;
  let fetching: Promise<TransformersEmbeddingModel> | undefined;
  const ready = (): Promise<TransformersEmbeddingModel> => {
    if (inner) return Promise.resolve(inner);
    fetching ??= downloadHubModel(options).then(
      () => {
        inner = open();
        return inner;
      },
      (error: unknown) => {
        fetching = undefined;
        throw error;
      },
    );
    return fetching;
  };
  return {
    id,
    get dimensions() {
      return inner?.dimensions ?? 0;
    },
    async embed(texts, embedOptions) {
      if (texts.length === 0) return [];
      return (await ready()).embed(texts, embedOptions);
    },
    async close() {
      await inner?.close();
    },
  };
}
