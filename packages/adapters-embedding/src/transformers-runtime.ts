import { isAbsolute, relative, resolve } from 'node:path';
import { PlatformError } from '@agent-platform/core';
import { relativePaths } from '@agent-platform/core/internal';

// What the local-folder embedder (transformers.ts) and the hub download (hub.ts) share.

// `@huggingface/transformers` (and its ONNX Runtime) is loaded on the first load of a model,
// never when this module is imported.
export type Transformers = typeof import('@huggingface/transformers');
let library: Promise<Transformers> | undefined;
export const transformers = (): Promise<Transformers> => {
  library ??= import('@huggingface/transformers');
  return library;
};

/** ONNX weights variants, as transformers.js names them. */
export type Dtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';

/** The ONNX file transformers.js loads for `dtype` (its `DEFAULT_DTYPE_SUFFIX_MAPPING`). */
export const onnxFile = (dtype: Dtype): string => `onnx/model${{ fp32: '', fp16: '_fp16', q8: '_quantized', int8: '_int8', uint8: '_uint8', q4: '_q4', bnb4: '_bnb4', q4f16: '_q4f16' }[dtype]}.onnx`;

/**
 * The errors of a model folder: they name it by `label` (its place in the data folder, or its
 * name), with any path inside it relative, never by its absolute path, since they reach API
 * callers (a 400 of the settings route, a document's `error`).
 */
export function modelErrors(folder: string, label: string): ModelError {
  const relative = relativePaths(folder, label);
  return (reason, cause) =>
    new PlatformError('invalid_request', `Embedding model folder "${label}" ${relative(reason)}`, {
      details: { folder: label },
      ...(cause === undefined ? {} : { cause }),
    });
}

export type ModelError = (reason: string, cause?: unknown) => PlatformError;

/**
 * `file` (a path relative to `folder`, as a model's own configuration names it) resolved inside
 * `folder`, or undefined when it would lead outside it (`..`, an absolute path): a model's files
 * (modules.json names its modules' folders) must never make the service read or write elsewhere.
 */
export function insideFolder(folder: string, file: string): string | undefined {
  const root = resolve(folder);
  const path = resolve(root, file);
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? path : undefined;
}

// transformers.js keeps its settings in one global `env`; loads change it only inside this queue.
let envQueue: Promise<unknown> = Promise.resolve();
export function withEnv<T>(change: (env: Transformers['env']) => void, run: () => Promise<T>): Promise<T> {
  const next = envQueue.then(async () => {
    const { env } = await transformers();
    const saved = { allowRemoteModels: env.allowRemoteModels, allowLocalModels: env.allowLocalModels, localModelPath: env.localModelPath, remoteHost: env.remoteHost, fetch: env.fetch };
    change(env);
    try {
      return await run();
    } finally {
      Object.assign(env, saved);
    }
  });
  envQueue = next.catch(() => undefined);
  return next;
}
