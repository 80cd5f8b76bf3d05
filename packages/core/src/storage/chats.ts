import type { ReasoningBlock, ToolCall } from '../agent/chat-model.js';
import type { Page } from './page.js';

export interface ChatRecord {
  /**
   * Unique per user, not across users: a chat is always addressed by its user and its id, so
   * another user's chat of the same id is never found, and no id can be taken from another user.
   */
  readonly id: string;
  readonly userId: string;
  readonly projectId: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type ChatPatch = Partial<Pick<ChatRecord, 'name'>> & { readonly updatedAt: Date };

/**
 * A knowledge excerpt an assistant message was given, kept with the message so a stored answer
 * still shows its citations: `[index]` in the text refers to it.
 */
export interface MessageSource {
  /** Citation number in the answer, from 1. */
  readonly index: number;
  readonly chunkId: string;
  readonly documentId: string;
  readonly fileName: string;
  /** The search score (0..1) the excerpt had when it was given. */
  readonly score: number;
  /** The excerpt's first words (at most 160 characters), readable after its chunk is gone. */
  readonly excerpt: string;
}

/**
 * A piece of a stored user message that held images: its text, or a reference to an image kept
 * once per chat in the blob store (never the bytes themselves).
 */
export type StoredContentPart =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image';
      /** The image's SHA-256 (hex): its name within its chat. */
      readonly ref: string;
      readonly mediaType: string;
      /** Size of the image, bytes. */
      readonly bytes: number;
    };

/** A stored chat message; `toolCalls` and `toolCallId` as in `ChatMessage`. */
export interface ChatMessageRecord {
  readonly chatId: string;
  /** Order within the chat, from 0. */
  readonly position: number;
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  /** With each call's `metadata` when the provider gave any (never shown: see `provider`). */
  readonly toolCalls: readonly ToolCall[] | null;
  readonly toolCallId: string | null;
  /**
   * An assistant message a model wrote: the provider whose model it was (`anthropic`, `google`,
   * ...). Its `reasoning` and its calls' `metadata` go back to that provider only (a chat's
   * project may change provider), and never to API clients. Absent for other messages.
   */
  readonly provider?: string;
  /**
   * An assistant message's reasoning blocks with the provider's data (Anthropic's and Bedrock's
   * signatures, redacted blocks), in order, where the provider needs them back (the adapter gave
   * them on `finish`). Absent when there were none (an empty list is stored as none).
   */
  readonly reasoning?: readonly ReasoningBlock[];
  /**
   * The knowledge the answer was given, in citation order: on the assistant message that ends
   * a turn, in citation order. Absent when there was none (an empty list is stored as none).
   */
  readonly sources?: readonly MessageSource[];
  /**
   * A user message with images: its parts in order (`content` is then its text alone). Absent
   * for every other message.
   */
  readonly parts?: readonly StoredContentPart[];
  readonly createdAt: Date;
}

/** Chats are keyed by their user and id together (`ChatRecord.id` is unique per user only). */
export interface ChatRepository {
  /** Throws a `conflict` PlatformError when the user already has a chat of that id (another user's of the same id is no conflict). */
  insert(chat: ChatRecord): Promise<void>;
  get(userId: string, id: string): Promise<ChatRecord | undefined>;
  /** The user's chats, newest first (by creation); only those of `projectId` when given. */
  list(query: { userId: string; projectId?: string | undefined; limit: number; offset: number }): Promise<Page<ChatRecord>>;
  /** Changes the user's chat (its name); undefined when the user has no such chat. */
  update(userId: string, id: string, patch: ChatPatch): Promise<ChatRecord | undefined>;
  /** Deletes the user's chat with its messages. */
  delete(userId: string, id: string): Promise<boolean>;
  touch(userId: string, id: string, at: Date): Promise<void>;
  /** Appends messages at the end of the user's chat, atomically; positions are assigned here. */
  appendMessages(userId: string, chatId: string, messages: readonly Omit<ChatMessageRecord, 'chatId' | 'position'>[]): Promise<void>;
  /** All messages of the user's chat, in order (none when the user has no such chat). */
  messages(userId: string, chatId: string): Promise<ChatMessageRecord[]>;
  /**
   * Up to `limit` messages of the user's chat before position `before` (all when absent), newest first:
   * the chat read from its end, a page at a time (the history a completion sends is its newest
   * turns, whatever the chat's length).
   */
  recentMessages(userId: string, chatId: string, options: { readonly limit: number; readonly before?: number }): Promise<ChatMessageRecord[]>;
  /**
   * The image references (`StoredContentPart.ref`) of the user's messages in one chat, or in
   * every chat of one project, each chat's once: what deleting them leaves in the blob store.
   */
  imageRefs(userId: string, scope: { readonly chatId: string } | { readonly projectId: string }): Promise<{ chatId: string; ref: string }[]>;
}
