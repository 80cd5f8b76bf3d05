import { IMAGE_TYPES } from '@agent-platform/core';
import {
  ChatMessagesResponse,
  ChatResponse,
  CreateChatRequest,
  CreateStreamRequest,
  ListChatsQuery,
  ListChatsResponse,
  MessageResponse,
  RenameChatRequest,
  StreamResponse,
} from '@agent-platform/core/schemas';
import { z } from 'zod';
import { type ApiRoute, route } from '../route.js';

const ChatIdParam = z.object({ chatId: z.string().min(1).max(200) });

/**
 * How long the caller's browser may keep a chat's image without asking again: a day. The bytes of
 * a ref never change (the ref is their digest), so a longer time would serve no stale image; a
 * day bounds how long a deleted chat's images stay in the caller's own cache.
 */
const IMAGE_MAX_AGE_SECONDS = 86_400;

/** Chats, their messages and their resumable streams: their routes, in the order of the table (routes/index.ts). */
export const chatsRoutes: readonly ApiRoute[] = [
  route({
    method: 'POST',
    path: '/api/chats',
    summary: 'Create a chat of a project',
    tag: 'Chats',
    errors: ['not_found'],
    body: CreateChatRequest,
    response: ChatResponse,
    status: 201,
    audit: { resource: 'chat', action: 'create', id: 'result.chat.id' },
    handler: (p, i) => p.chats.create(i.caller, i.body),
  }),
  route({
    method: 'GET',
    path: '/api/chats',
    summary: "List the caller's chats, newest first",
    tag: 'Chats',
    query: ListChatsQuery,
    failure: { chats: [], hasMore: false, total: 0 },
    response: ListChatsResponse,
    handler: (p, i) => p.chats.list(i.caller, i.query),
  }),
  route({
    method: 'GET',
    path: '/api/chats/{chatId}/messages',
    summary: 'The messages of a chat, in order (with tool calls and results)',
    tag: 'Chats',
    params: ChatIdParam,
    response: ChatMessagesResponse,
    handler: (p, i) => p.chats.messages(i.caller, i.params.chatId),
  }),
  route({
    method: 'GET',
    path: '/api/chats/{chatId}/images/{ref}',
    summary: "An image of a chat's message, by the ref its parts name: the bytes, of the type told by them",
    tag: 'Chats',
    params: ChatIdParam.extend({ ref: z.string().min(1).max(200).describe("The image's SHA-256 (hex), as the message's parts name it") }),
    kind: 'binary',
    // Never SVG or any type a browser runs: only the types a completion takes are ever stored.
    media: { types: IMAGE_TYPES, maxAgeSeconds: IMAGE_MAX_AGE_SECONDS, fileName: (image) => `${image.etag}.${image.contentType.slice('image/'.length)}` },
    handler: async (p, i) => {
      const image = await p.chats.imageOf(i.caller, i.params.chatId, i.params.ref);
      return { bytes: image.bytes, contentType: image.mediaType, etag: image.ref };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/chats/{chatId}',
    summary: 'Rename a chat',
    tag: 'Chats',
    params: ChatIdParam,
    body: RenameChatRequest,
    response: ChatResponse,
    audit: { resource: 'chat', action: 'update', id: 'params.chatId' },
    handler: (p, i) => p.chats.rename(i.caller, i.params.chatId, i.body),
  }),
  route({
    method: 'DELETE',
    path: '/api/chats/{chatId}',
    summary: 'Delete a chat and its messages',
    tag: 'Chats',
    params: ChatIdParam,
    response: MessageResponse,
    audit: { resource: 'chat', action: 'delete', id: 'params.chatId' },
    handler: (p, i) => p.chats.delete(i.caller, i.params.chatId),
  }),
  route({
    method: 'POST',
    path: '/api/chats/{chatId}/streams',
    summary: 'Create a resumable stream of a chat; completions that name it write their chunks there',
    tag: 'Chats',
    errors: ['rate_limited'],
    params: ChatIdParam,
    body: CreateStreamRequest,
    response: StreamResponse,
    status: 201,
    audit: { resource: 'stream', action: 'create', id: 'result.stream.id' },
    handler: (p, i) => p.completions.createStream(i.caller, i.params.chatId, i.body),
  }),
  route({
    method: 'GET',
    path: '/api/chats/{chatId}/streams/{streamId}',
    summary: 'Read a stream as SSE: replays from the start (or after Last-Event-ID) and follows it live until it ends',
    tag: 'Chats',
    params: ChatIdParam.extend({ streamId: z.string().min(1).max(200) }),
    response: z.object({ id: z.number().int(), data: z.string() }),
    kind: 'replay',
    handler: (p, i) => p.completions.readStream(i.caller, i.params.chatId, i.params.streamId, i.headers.get('last-event-id') ?? undefined, i.signal),
  }),
];
