import type { z } from 'zod';
import { type Caller, callerProject, type PlatformContext } from '../context.js';
import { isPlatformError, PlatformError } from '../errors.js';
import { CHAT_ID_RULE, isChatId } from '../ids.js';
import { type ImageType, sniffImageType } from '../image-types.js';
import { offsetPageFields } from '../paging.js';
import type { Chat, ChatMessagesResponse, ChatResponse, CreateChatRequest, ListChatsQuery, ListChatsResponse, RenameChatRequest } from '../schemas/chats.js';
import type { ChatRecord } from '../storage/types.js';
import type { ChatImages } from './images.js';

type CreateBody = z.output<typeof CreateChatRequest>;
type ListQuery = z.output<typeof ListChatsQuery>;
type RenameBody = z.output<typeof RenameChatRequest>;

function toChat(record: ChatRecord): Chat {
  return {
    id: record.id,
    name: record.name,
    projectId: record.projectId,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** A stored image of a chat's message, as `GET /api/chats/{chatId}/images/{ref}` serves it. */
export interface ChatImage {
  /** The image's SHA-256 (hex): its name in the chat's history, and a strong validator of its bytes. */
  readonly ref: string;
  /** Told by its bytes (only the types a completion takes are ever stored). */
  readonly mediaType: ImageType;
  readonly bytes: Uint8Array;
}

/**
 * A user's chats: each belongs to one of the user's projects and holds its messages (the
 * completions write them). `open` and `get` serve the completions and their streams
 * (`ChatOpener`), `putImage` and `image` the images of their messages (kept in the blob store,
 * referenced by the messages); a chat's delete, and a project's (`dropProject`), take its images.
 */
export class ChatsService {
  readonly #ctx: PlatformContext;
  readonly #images: ChatImages;

  constructor(ctx: PlatformContext, deps: { images: ChatImages }) {
    this.#ctx = ctx;
    this.#images = deps.images;
  }

  /** Keeps an image of a message of the user's chat, once per chat; answers its reference. */
  putImage(userId: string, chatId: string, bytes: Uint8Array): Promise<string> {
    return this.#images.put(userId, chatId, bytes);
  }

  /** The bytes of an image of the user's chat (by its reference), undefined when it is gone. */
  image(userId: string, chatId: string, ref: string): Promise<Uint8Array | undefined> {
    return this.#images.get(userId, chatId, ref);
  }

  /**
   * `GET /api/chats/{chatId}/images/{ref}`: an image of one of the caller's chats, by the ref
   * its message keeps (`parts`). `not_found` for another user's chat, an unknown ref, a ref of
   * another chat (each chat keeps its own copy) and anything that is not a ref.
   */
  async imageOf(caller: Caller, chatId: string, ref: string): Promise<ChatImage> {
    await this.get(caller, chatId);
    const bytes = await this.#images.get(caller.userId, chatId, ref);
    const mediaType = bytes && sniffImageType(bytes);
    if (!bytes || !mediaType) throw PlatformError.notFound('Image not found');
    return { ref, mediaType, bytes };
  }

  /** The chats part of a project's delete (`ProjectCleanup`): their images, read before and deleted after. */
  async dropProject(caller: Caller, projectId: string): Promise<() => Promise<void>> {
    const images = await this.#ctx.storage.chats.imageRefs(caller.userId, { projectId });
    return () => this.#images.drop(caller.userId, images);
  }

  /** `POST /api/chats`: a chat of one of the caller's projects. */
  async create(caller: Caller, body: CreateBody): Promise<ChatResponse> {
    const { storage, clock, ids, caps } = this.#ctx;
    await callerProject(this.#ctx, caller, body.projectId);
    const now = clock.now();
    const record: ChatRecord = { id: ids.next('chat'), userId: caller.userId, projectId: body.projectId, name: body.name ?? 'New chat', createdAt: now, updatedAt: now };
    await storage.transaction(async (tx) => {
      await caps.reserve(tx, caller.userId, 'chats');
      await tx.chats.insert(record);
    });
    return { success: true, chat: toChat(record) };
  }

  /** `GET /api/chats`: the caller's chats, newest first. (The route's failures also answer the spec's empty list.) */
  async list(caller: Caller, q: ListQuery): Promise<ListChatsResponse> {
    if (q.projectId !== undefined) await callerProject(this.#ctx, caller, q.projectId);
    const page = await this.#ctx.storage.chats.list({ userId: caller.userId, projectId: q.projectId, limit: q.limit, offset: q.offset });
    return {
      success: true,
      chats: page.items.map(toChat),
      ...offsetPageFields(q.offset, page),
      message: page.total === 0 ? 'No chats found' : `Found ${page.total} chat${page.total === 1 ? '' : 's'}`,
    };
  }

  /**
   * The caller's chat of an id the client chose, created (in `projectId`) when the caller has
   * none. Chat ids are unique per user: another user's chat of the same id is neither found nor
   * in the way, so every unknown id is answered alike and no id can be taken from anyone. A new
   * id must have the form of a chat id (`CHAT_ID_RULE`).
   */
  async open(caller: Caller, id: string, projectId: string): Promise<ChatRecord> {
    if (!isChatId(id)) throw PlatformError.invalid(`chatId: ${CHAT_ID_RULE}`, [{ path: ['chatId'], code: 'invalid_format', message: CHAT_ID_RULE }]);
    const { storage, clock, caps } = this.#ctx;
    const now = clock.now();
    const record: ChatRecord = { id, userId: caller.userId, projectId, name: 'New chat', createdAt: now, updatedAt: now };
    try {
      await storage.transaction(async (tx) => {
        await caps.reserve(tx, caller.userId, 'chats');
        await tx.chats.insert(record);
      });
      return record;
    } catch (error) {
      // Created meanwhile by another request of the caller's: that one is the chat.
      const existing = isPlatformError(error) && error.code === 'conflict' ? await storage.chats.get(caller.userId, id) : undefined;
      if (!existing) throw error;
      return existing;
    }
  }

  /** The caller's chat of that id; `not_found` when the caller has none. */
  async get(caller: Caller, chatId: string): Promise<ChatRecord> {
    const chat = await this.#ctx.storage.chats.get(caller.userId, chatId);
    if (!chat) throw PlatformError.notFound('Chat not found');
    return chat;
  }

  /** `GET /api/chats/{chatId}/messages`: every stored message, in order (tool calls and results included). */
  async messages(caller: Caller, chatId: string): Promise<ChatMessagesResponse> {
    await this.get(caller, chatId);
    const messages = await this.#ctx.storage.chats.messages(caller.userId, chatId);
    return {
      success: true,
      messages: messages.map((m) => ({
        role: m.role,
        content: m.content,
        // Never the provider's data (signatures of calls and reasoning): only what the API shows of a call.
        ...(m.toolCalls ? { toolCalls: m.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) } : {}),
        ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
        ...(m.sources?.length ? { sources: m.sources.map((source) => ({ ...source })) } : {}),
        ...(m.parts?.length ? { parts: m.parts.map((part) => ({ ...part })) } : {}),
        createdAt: m.createdAt.toISOString(),
      })),
    };
  }

  /** `PATCH /api/chats/{chatId}`: renames the chat. */
  async rename(caller: Caller, chatId: string, body: RenameBody): Promise<ChatResponse> {
    const chat = await this.#ctx.storage.chats.update(caller.userId, chatId, { name: body.name, updatedAt: this.#ctx.clock.now() });
    if (!chat) throw PlatformError.notFound('Chat not found');
    return { success: true, chat: toChat(chat) };
  }

  /** `DELETE /api/chats/{chatId}`: the chat, its messages and their images. */
  async delete(caller: Caller, chatId: string): Promise<{ success: true; message: string }> {
    const images = await this.#ctx.storage.chats.imageRefs(caller.userId, { chatId });
    if (!(await this.#ctx.storage.chats.delete(caller.userId, chatId))) throw PlatformError.notFound('Chat not found');
    await this.#images.drop(caller.userId, images);
    return { success: true, message: 'Chat deleted' };
  }
}
