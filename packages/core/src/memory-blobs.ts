import type { BlobStore } from './knowledge/interfaces.js';

/** Blobs in a Map, for platforms built without a blob store (knowledge files, chat images). */
export function inMemoryBlobs(): BlobStore {
  const blobs = new Map<string, Uint8Array>();
  return {
    put: async (key, bytes) => void blobs.set(key, new Uint8Array(bytes)),
    get: async (key) => blobs.get(key),
    delete: async (key) => blobs.delete(key),
  };
}
