import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { type ChatMessagesResponse, type ChatResponse, CreateChatRequest, ListChatsQuery, type ListChatsResponse, RenameChatRequest } from '../schemas/chats.js';
import { parseInput } from '../validation.js';
import type { ChatImage, ChatsService } from './service.js';

/**
 * Chats and their messages: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `ChatsService`; the server calls the service with the values its routes parsed.
 */
export const chatsMethods = publicMethods<{ chats: ChatsService }>()({
  /** `POST /api/chats`: a chat of one of the caller's projects. */
  async createChat(caller: Caller, input: CreateChatRequest): Promise<ChatResponse> {
    return this.chats.create(caller, parseInput(CreateChatRequest, input));
  },

  /** `GET /api/chats`: the caller's chats, newest first. (The route's failures also answer the spec's empty list.) */
  async listChats(caller: Caller, query: ListChatsQuery = {}): Promise<ListChatsResponse> {
    return this.chats.list(caller, parseInput(ListChatsQuery, query));
  },

  /** `GET /api/chats/{chatId}/messages`: every stored message, in order (tool calls and results included). */
  chatMessages(caller: Caller, chatId: string): Promise<ChatMessagesResponse> {
    return this.chats.messages(caller, chatId);
  },

  /**
   * `GET /api/chats/{chatId}/images/{ref}`: an image of a message of the caller's chat (its bytes
   * and type), by the ref the message's `parts` name. Another user's chat, or a ref the chat does
   * not keep, is `not_found`.
   */
  chatImage(caller: Caller, chatId: string, ref: string): Promise<ChatImage> {
    return this.chats.imageOf(caller, chatId, ref);
  },

  /** `PATCH /api/chats/{chatId}`: renames the chat. */
  async renameChat(caller: Caller, chatId: string, input: RenameChatRequest): Promise<ChatResponse> {
    return this.chats.rename(caller, chatId, parseInput(RenameChatRequest, input));
  },

  /** `DELETE /api/chats/{chatId}`: the chat and its messages. */
  deleteChat(caller: Caller, chatId: string): Promise<{ success: true; message: string }> {
    return this.chats.delete(caller, chatId);
  },
});
