import { z } from 'zod';
import { offsetPaging, Timestamp } from './common.js';
import { CompletionSource } from './completion-answers.js';

export const Chat = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Chat = z.output<typeof Chat>;

export const CreateChatRequest = z
  .object({
    projectId: z.string().min(1).max(200),
    name: z.string().trim().min(1).max(200).optional().describe('Default: "New chat"'),
  })
  .strict();
export type CreateChatRequest = z.input<typeof CreateChatRequest>;

export const RenameChatRequest = z
  .object({
    name: z.string().trim().min(1).max(200).describe('The new name (1-200 characters, spaces at the ends dropped)'),
  })
  .strict();
export type RenameChatRequest = z.input<typeof RenameChatRequest>;

export const ChatResponse = z.object({ success: z.literal(true), chat: Chat });
export type ChatResponse = z.output<typeof ChatResponse>;

export const ListChatsQuery = z.object({
  projectId: z.string().min(1).max(200).optional().describe("Only the chats of this project (one of the caller's: another is 404)"),
  ...offsetPaging,
});
export type ListChatsQuery = z.input<typeof ListChatsQuery>;

export const ListChatsResponse = z.object({
  success: z.literal(true),
  chats: z.array(Chat),
  nextOffset: z.number().int(),
  hasMore: z.boolean(),
  total: z.number().int(),
  message: z.string(),
});
export type ListChatsResponse = z.output<typeof ListChatsResponse>;

export const StoredToolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

export const ChatMessageOut = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().nullable(),
  toolCalls: z.array(StoredToolCall).optional(),
  toolCallId: z.string().optional(),
  sources: z.array(CompletionSource).optional().describe('The knowledge the answer was given, as the completion returned it: on the assistant message that ends a turn'),
  parts: z
    .array(
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('text'), text: z.string() }),
        z.object({
          type: z.literal('image'),
          ref: z.string().describe("The image's SHA-256 (hex): kept once per chat in the blob store"),
          mediaType: z.string(),
          bytes: z.number().int().describe('Size of the image'),
        }),
      ]),
    )
    .optional()
    .describe('A user message that held images: its text and references to its images, in order (`content` is its text)'),
  createdAt: Timestamp,
});
export type ChatMessageOut = z.output<typeof ChatMessageOut>;

export const ChatMessagesResponse = z.object({ success: z.literal(true), messages: z.array(ChatMessageOut) });
export type ChatMessagesResponse = z.output<typeof ChatMessagesResponse>;

export const CreateStreamRequest = z.object({ chatId: z.string().min(1).max(200).describe('Must equal the chat id of the path') });
export type CreateStreamRequest = z.input<typeof CreateStreamRequest>;

export const StreamResponse = z.object({
  success: z.literal(true),
  message: z.string(),
  stream: z.object({ id: z.string(), chatId: z.string(), createdAt: Timestamp }),
});
