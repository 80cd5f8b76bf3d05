import type { ChatMessage } from '../agent/chat-model.js';
import type { StoredContentPart } from '../storage/types.js';
import type { ImageLoader } from './history.js';

/** Where the images of chat messages are kept (the chats area implements it: once per chat, in the blob store). */
export interface ChatImageStore {
  /** Keeps an image of a message of the user's chat; answers its reference. */
  putImage(userId: string, chatId: string, bytes: Uint8Array): Promise<string>;
  /** The bytes of an image of the user's chat, undefined when it is gone. */
  image(userId: string, chatId: string, ref: string): Promise<Uint8Array | undefined>;
}

/** Loads the images a chat's stored messages refer to, as base64. */
export function imageLoader(store: ChatImageStore, userId: string, chatId: string): ImageLoader {
  return async (ref) => {
    const bytes = await store.image(userId, chatId, ref);
    return bytes && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  };
}

/**
 * The parts a user message with images is stored as: its text parts, and each image put in the
 * store (once per chat) and kept as its reference. Undefined for any other message.
 */
export async function storedParts(m: ChatMessage, store: ChatImageStore, userId: string, chatId: string): Promise<StoredContentPart[] | undefined> {
  if (m.role !== 'user' || typeof m.content === 'string' || !m.content.some((p) => p.type === 'image')) return undefined;
  const parts: StoredContentPart[] = [];
  for (const part of m.content) {
    if (part.type === 'text') parts.push({ type: 'text', text: part.text });
    else {
      const bytes = Buffer.from(part.data, 'base64');
      parts.push({ type: 'image', ref: await store.putImage(userId, chatId, bytes), mediaType: part.mediaType, bytes: bytes.byteLength });
    }
  }
  return parts;
}

/** The messages with each image said in text instead: a chat's images for a model that cannot take them. */
export function withoutImages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) =>
    m.role === 'user' && typeof m.content !== 'string' && m.content.some((p) => p.type === 'image')
      ? { ...m, content: m.content.map((p) => (p.type === 'image' ? { type: 'text' as const, text: '[an image, not given to this model]' } : p)) }
      : m,
  );
}
