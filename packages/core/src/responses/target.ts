import type { z } from 'zod';
import type { Caller, PlatformContext } from '../context.js';
import type { CompletionMessage } from '../schemas/completions.js';
import type { CreateResponseRequest } from '../schemas/responses.js';
import type { ChatRecord, ProjectRecord, ResponseRecord, StorageAdapter } from '../storage/types.js';
import { invalid } from './answers.js';
import { type StoredInputItem, storedToMessages } from './input.js';

type Body = z.output<typeof CreateResponseRequest>;

/** Most responses a chain of a plain model is read back through (`previous_response_id`). */
const MAX_CHAIN = 100;

/** The project and chat of a new response: `chatId`'s, the previous response's, or a new chat of the project named (none with `store: false`). */
export async function responseTarget(
  ctx: PlatformContext,
  caller: Caller,
  body: Body,
  named: ProjectRecord | undefined,
  previous: ResponseRecord | undefined,
  store: boolean,
): Promise<{ chat: ChatRecord | undefined; project: ProjectRecord | undefined; fresh: boolean }> {
  const { storage, clock, ids } = ctx;
  const chatId = body.chatId ?? previous?.chatId ?? undefined;
  let chat = chatId ? await storage.chats.get(caller.userId, chatId) : undefined;
  if (previous?.chatId && previous.projectId && !chat) {
    // Its chat is made when a turn completes (a failed or cancelled first response has none) or
    // was deleted: made now, with the previous response's input and output before the new input.
    if (named && named.id !== previous.projectId) throw invalid('model', `response ${previous.id} belongs to project ${previous.projectId}: name that project, or leave model out`);
    const now = clock.now();
    const project = named ?? (await storage.projects.get(caller.userId, previous.projectId));
    return { chat: { id: previous.chatId, userId: caller.userId, projectId: previous.projectId, name: 'New chat', createdAt: now, updatedAt: now }, project, fresh: true };
  }
  if (chat) {
    if (named && named.id !== chat.projectId) throw invalid('model', `the chat ${chat.id} belongs to project ${chat.projectId}: name that project, or leave model out`);
    return { chat, project: named ?? (await storage.projects.get(caller.userId, chat.projectId)), fresh: false };
  }
  if (body.chatId && !named) throw invalid('chatId', 'a new chat needs "model" to be one of your projects');
  if (!named || (!store && !body.chatId)) return { chat: undefined, project: named, fresh: false };
  const now = clock.now();
  chat = { id: body.chatId ?? ids.next('chat'), userId: caller.userId, projectId: named.id, name: 'New chat', createdAt: now, updatedAt: now };
  return { chat, project: named, fresh: true };
}

/** A plain model's earlier responses (their input, then their output), oldest first. */
export async function responseChain(storage: StorageAdapter, userId: string, last: ResponseRecord): Promise<CompletionMessage[]> {
  const items: StoredInputItem[][] = [];
  let at: ResponseRecord | undefined = last;
  for (let hops = 0; at && hops < MAX_CHAIN; hops++) {
    items.unshift([...(at.input as StoredInputItem[]), ...(at.resource.output as StoredInputItem[])]);
    at = at.previousResponseId && !at.chatId ? await storage.responses.get(userId, at.previousResponseId) : undefined;
  }
  return storedToMessages(items.flat());
}
