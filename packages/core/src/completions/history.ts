import { type ChatContentPart, type ChatMessage, messageText, type ToolCall } from '../agent/chat-model.js';
import type { ChatMessageRecord, StorageAdapter } from '../storage/types.js';
import { countTokens } from '../tokens.js';

/**
 * Default token budget of the messages of a model call (`AgentOptions.historyTokens`): a quarter
 * of the 128,000-token context of today's common models, leaving room for the tools offered, the
 * turn's own tool rounds and the answer.
 */
export const DEFAULT_HISTORY_TOKENS = 32_000;

/** Tokens a message costs beyond its text: its role and framing (OpenAI's chat format adds 3-4). */
const MESSAGE_OVERHEAD = 4;

/**
 * Tokens an image is counted as: providers count images by their size (OpenAI 85 to about 1,100
 * for a 1024x1024 image in high detail, Anthropic about 1,600 for the largest they keep), so a
 * round figure in that range.
 */
export const IMAGE_TOKENS = 1_000;

/** Messages read from storage per query, from the chat's end. */
const PAGE = 100;

/**
 * How far back (messages) the chat's last question is looked for once the budget is spent, for a
 * request that brings none (tool results continuing a turn of many tool rounds).
 */
const QUESTION_SCAN = 1_000;

/** Longest stretch of non-space (or of space) characters tokenized as one piece. */
const RUN = 64;
/** Longest piece of ordinary text tokenized at once. */
const WINDOW = 1024;
/** Work between two yields to the event loop, in ms. */
const SLICE_MS = 8;

/**
 * Pieces of `text` whose token counts add up to (about) the text's: windows of ordinary text cut
 * after a space, and stretches of more than `RUN` characters without a space (base64, minified
 * code), or of spaces, cut every `RUN` characters. The tokenizer's cost grows with the square of
 * a stretch's length, so no piece of a hostile text is ever long; a cut in such a stretch adds at
 * most a token to the count.
 */
function* pieces(text: string): Generator<string> {
  const longRun = new RegExp(`\\S{${RUN + 1},}|\\s{${RUN + 1},}`, 'g');
  let at = 0;
  const plain = function* (to: number): Generator<string> {
    while (at < to) {
      let end = Math.min(to, at + WINDOW);
      if (end < to) {
        const space = text.lastIndexOf(' ', end);
        if (space > at + WINDOW / 2) end = space;
      }
      yield text.slice(at, end);
      at = end;
    }
  };
  for (const match of text.matchAll(longRun)) {
    yield* plain(match.index);
    const end = match.index + match[0].length;
    for (; at < end; at += RUN) yield text.slice(at, Math.min(end, at + RUN));
    at = end;
  }
  yield* plain(text.length);
}

/** Counts tokens (o200k_base, as chunking does), yielding to the event loop now and then, and stops once past a limit. */
class TokenCounter {
  #sliceStart = performance.now();

  /** Tokens of `text`, or a number above `limit` as soon as it is known to pass it. */
  async count(text: string, limit: number): Promise<number> {
    // No token is longer than 128 characters (see tokens.ts).
    if (text.length > (limit + 1) * 128) return limit + 1;
    let n = 0;
    for (const piece of pieces(text)) {
      n += countTokens(piece);
      if (n > limit) return n;
      if (performance.now() - this.#sliceStart > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        this.#sliceStart = performance.now();
      }
    }
    return n;
  }

  /** Tokens of a message: its text, its tool calls' names and arguments, and the framing. */
  async message(m: ChatMessage, limit: number): Promise<number> {
    let n = MESSAGE_OVERHEAD + (await this.count(m.content === null ? '' : messageText(m.content), limit));
    if (m.role === 'user' && typeof m.content !== 'string') n += IMAGE_TOKENS * m.content.filter((p) => p.type === 'image').length;
    if (m.role === 'assistant') {
      for (const call of m.toolCalls ?? []) {
        if (n > limit) break;
        n += MESSAGE_OVERHEAD + (await this.count(call.name, limit - n)) + (await this.count(call.arguments, limit - n));
      }
    }
    return n;
  }

  /** Tokens of messages together, or a number above `limit` once past it. */
  async messages(list: readonly ChatMessage[], limit: number): Promise<number> {
    let n = 0;
    for (const m of list) {
      if (n > limit) break;
      n += await this.message(m, limit - n);
    }
    return n;
  }
}

/** The bytes (base64) of an image a stored message refers to (`StoredContentPart.ref`), undefined when it is gone. */
export type ImageLoader = (ref: string) => Promise<string | undefined>;

/** A stored user message's parts, its images loaded (one that is gone is said so in text). */
async function userContent(m: ChatMessageRecord, load: ImageLoader | undefined): Promise<string | ChatContentPart[]> {
  if (!m.parts?.length || !load) return m.content ?? '';
  const parts: ChatContentPart[] = [];
  for (const part of m.parts) {
    if (part.type === 'text') parts.push(part);
    else {
      const data = await load(part.ref);
      parts.push(data === undefined ? { type: 'text', text: '[an image that is no longer stored]' } : { type: 'image', mediaType: part.mediaType, data });
    }
  }
  return parts;
}

/** How stored messages are read for a model call. */
export interface RecordReading {
  /** Loads a user message's images; without it, the message is its text. */
  readonly load?: ImageLoader | undefined;
  /**
   * The provider of the call: an assistant message that provider's model wrote keeps its
   * reasoning blocks and its calls' metadata (signatures it needs back); another provider's
   * messages go without them, as their data means nothing to it (or is refused by it).
   */
  readonly provider?: string | undefined;
}

/** An assistant message's calls without the provider's data. */
const plainCalls = (calls: readonly ToolCall[]): ToolCall[] => calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));

/** A stored message as the model is given it (see `RecordReading`). */
export const fromRecord = async (m: ChatMessageRecord, reading: RecordReading = {}): Promise<ChatMessage> => {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content ?? '' };
    case 'user':
      return { role: 'user', content: await userContent(m, reading.load) };
    case 'assistant': {
      const own = reading.provider !== undefined && m.provider === reading.provider;
      const calls = m.toolCalls && (own ? m.toolCalls : plainCalls(m.toolCalls));
      return { role: 'assistant', content: m.content, ...(calls ? { toolCalls: calls } : {}), ...(own && m.reasoning?.length ? { reasoning: m.reasoning } : {}) };
    }
    case 'tool':
      return { role: 'tool', toolCallId: m.toolCallId ?? '', content: m.content ?? '' };
  }
};

/** A turn of a chat: a user message and what followed it up to the next one, in order. */
interface Turn {
  readonly messages: readonly ChatMessage[];
  readonly tokens: number;
}

/** The end of a chat as read for a completion (`readRecentTurns`). */
export interface RecentTurns {
  /** The budget it was read for. */
  readonly budget: number;
  /** The newest whole turns whose tokens together stay within the budget, newest first. */
  readonly turns: readonly Turn[];
  /**
   * The chat's last assistant message with tool calls and the tool messages after it, when some
   * of its calls have no result yet: the chat waits for the client's results, which the next
   * request brings, so this is always sent with them (a call is never split from its results).
   * Empty otherwise.
   */
  readonly pending: readonly ChatMessage[];
  /** The text of the chat's last user message, when one was found. */
  readonly question: string | undefined;
}

/** The newest messages from the last assistant message with calls on, when some of its calls are unanswered. */
function pendingOf(newestFirst: readonly ChatMessage[]): ChatMessage[] {
  const results = new Set<string>();
  for (const [i, m] of newestFirst.entries()) {
    if (m.role === 'tool') {
      results.add(m.toolCallId);
      continue;
    }
    if (m.role === 'assistant' && m.toolCalls?.some((call) => !results.has(call.id))) return newestFirst.slice(0, i + 1).reverse();
    return [];
  }
  return [];
}

/**
 * Reads a chat from its end, a page at a time, until its turns pass `budget` tokens (or the chat
 * starts): what a completion needs of it, whatever the chat's length; the images of its user
 * messages are loaded by `reading.load` (each counted as `IMAGE_TOKENS`), and the assistant
 * messages of `reading.provider` keep that provider's data (not counted: Anthropic does not count
 * earlier turns' thinking, and signatures are not text). Turns start at a user
 * message (messages before the chat's first one make a turn of their own), so a tool call and
 * its results are always in one turn.
 */
export async function readRecentTurns(storage: StorageAdapter, userId: string, chatId: string, budget: number, reading: RecordReading = {}): Promise<RecentTurns> {
  const counter = new TokenCounter();
  const turns: Turn[] = [];
  const seen: ChatMessage[] = []; // newest first, while the newest turn is read
  let current: ChatMessage[] = []; // the turn being read, newest first
  let currentTokens = 0;
  let total = 0;
  let question: string | undefined;
  let full = false; // the budget is spent: only the question is still looked for
  let scanned = 0;
  let before: number | undefined;
  for (;;) {
    const page = await storage.chats.recentMessages(userId, chatId, { limit: PAGE, ...(before !== undefined ? { before } : {}) });
    for (const record of page) {
      const m = await fromRecord(record, full ? { provider: reading.provider } : reading);
      if (turns.length === 0) seen.push(m);
      if (full) {
        if (m.role === 'user') return { budget, turns, pending: pendingOf(seen), question: messageText(m.content) };
        if (++scanned >= QUESTION_SCAN) return { budget, turns, pending: pendingOf(seen), question };
        continue;
      }
      if (m.role === 'user') question ??= messageText(m.content);
      current.push(m);
      currentTokens += await counter.message(m, budget - total - currentTokens);
      if (total + currentTokens > budget) {
        full = true;
        if (question !== undefined) return { budget, turns, pending: pendingOf(seen), question };
        continue;
      }
      if (m.role === 'user') {
        turns.push({ messages: current.reverse(), tokens: currentTokens });
        total += currentTokens;
        current = [];
        currentTokens = 0;
      }
    }
    const last = page.at(-1);
    if (page.length < PAGE || !last) break;
    before = last.position;
  }
  if (!full && current.length > 0) turns.push({ messages: current.reverse(), tokens: currentTokens });
  return { budget, turns, pending: pendingOf(seen), question };
}

/**
 * The calls of the chat's last assistant message that no tool message after it answers (none
 * when a user or an answer came later): what the chat waits for, read from its end.
 */
export async function waitingToolCalls(storage: StorageAdapter, userId: string, chatId: string): Promise<ToolCall[]> {
  const answered = new Set<string>();
  let before: number | undefined;
  for (;;) {
    const page = await storage.chats.recentMessages(userId, chatId, { limit: PAGE, ...(before !== undefined ? { before } : {}) });
    for (const m of page) {
      if (m.role !== 'tool') return m.role === 'assistant' ? plainCalls((m.toolCalls ?? []).filter((c) => !answered.has(c.id))) : [];
      if (m.toolCallId) answered.add(m.toolCallId);
    }
    const last = page.at(-1);
    if (page.length < PAGE || !last) return [];
    before = last.position;
  }
}

/**
 * The history sent with a request whose own messages (and the system context) take `used`
 * tokens: the newest turns that fit in what is left of the budget, oldest first out, whole; and
 * when the chat waits for tool results, at least its pending tool calls.
 */
export function fitHistory(recent: RecentTurns, used: number): ChatMessage[] {
  const kept: Turn[] = [];
  let total = used;
  for (const turn of recent.turns) {
    if (total + turn.tokens > recent.budget) break;
    kept.push(turn);
    total += turn.tokens;
  }
  if (kept.length === 0 && recent.pending.length > 0) return [...recent.pending];
  return kept.reverse().flatMap((turn) => turn.messages);
}

/** Tokens of messages (the system context and a request's own), or a number above `limit` once past it. */
export function countMessageTokens(messages: readonly ChatMessage[], limit: number): Promise<number> {
  return new TokenCounter().messages(messages, limit);
}
