import { createHash } from 'node:crypto';
import type { BlobStore } from '../knowledge/interfaces.js';

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/**
 * The images of users' chat messages, in the blob store: each image once per chat (named by its
 * SHA-256, the `ref` its messages keep), so a chat's history holds references, not bytes. The
 * blob key joins a digest of the chat's user and id with the ref: another chat's copy of the
 * same image is its own, and goes with its own chat.
 */
export class ChatImages {
  readonly #blobs: BlobStore;

  constructor(blobs: BlobStore) {
    this.#blobs = blobs;
  }

  #key(userId: string, chatId: string, ref: string): string {
    return `chatimg-${sha256(`${userId}\0${chatId}`).slice(0, 32)}-${ref}`;
  }

  /** Keeps the image for the chat (once: the same bytes again are the same blob); answers its ref. */
  async put(userId: string, chatId: string, bytes: Uint8Array): Promise<string> {
    const ref = sha256(bytes);
    await this.#blobs.put(this.#key(userId, chatId, ref), bytes);
    return ref;
  }

  /** The image's bytes, or undefined when it is gone. */
  get(userId: string, chatId: string, ref: string): Promise<Uint8Array | undefined> {
    return /^[0-9a-f]{64}$/.test(ref) ? this.#blobs.get(this.#key(userId, chatId, ref)) : Promise.resolve(undefined);
  }

  /** Deletes the images (of chats whose messages are deleted). */
  async drop(userId: string, images: readonly { chatId: string; ref: string }[]): Promise<void> {
    for (const { chatId, ref } of images) await this.#blobs.delete(this.#key(userId, chatId, ref));
  }
}
