import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../knowledge/interfaces.js';

/** The behaviour every `BlobStore` must have. */
export function describeBlobStore(name: string, options: { create(): Promise<BlobStore> | BlobStore; cleanup?(): Promise<void> }): void {
  describe(`BlobStore conformance: ${name}`, () => {
    let blobs: BlobStore;
    // The bytes as a plain Uint8Array: a store may hand out a Buffer (the contract's bytes, of another class).
    const read = async (key: string) => {
      const bytes = await blobs.get(key);
      return bytes && new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    };
    beforeEach(async () => {
      blobs = await options.create();
    });
    afterEach(async () => {
      await options.cleanup?.();
    });

    it('stores, reads, replaces and deletes bytes', async () => {
      const bytes = new Uint8Array([0, 1, 2, 255]);
      await blobs.put('file_1', bytes);
      expect(await read('file_1')).toEqual(bytes);
      await blobs.put('file_1', new Uint8Array([7]));
      expect(await read('file_1')).toEqual(new Uint8Array([7]));
      expect(await blobs.delete('file_1')).toBe(true);
      expect(await read('file_1')).toBeUndefined();
      expect(await blobs.delete('file_1')).toBe(false);
    });

    it('keeps a copy: changing the given array later does not change the stored bytes', async () => {
      const bytes = new Uint8Array([1, 2, 3]);
      await blobs.put('file_2', bytes);
      bytes[0] = 9;
      expect(await read('file_2')).toEqual(new Uint8Array([1, 2, 3]));
    });

    it('stores empty and large blobs', async () => {
      await blobs.put('empty', new Uint8Array());
      expect(await read('empty')).toEqual(new Uint8Array());
      const big = new Uint8Array(3 * 1024 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = i % 251;
      await blobs.put('big', big);
      // Compared as buffers: a deep equality of 3 million elements takes seconds.
      expect(Buffer.from((await blobs.get('big')) ?? []).equals(Buffer.from(big))).toBe(true);
    });

    it('refuses keys that could leave the store (path separators, dot segments)', async () => {
      for (const key of ['../escape', 'a/b', 'a\\\\b', '..', '.', '']) {
        await expect(blobs.put(key, new Uint8Array([1])), key).rejects.toThrow();
      }
    });
  });
}
