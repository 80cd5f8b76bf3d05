import type { StreamRecord, StreamStore, StreamWriter } from '../completions/types.js';
import type { ErrorCode } from '../errors.js';
import type { OutputItem, ResponseResource, ResponseStreamEvent } from '../schemas/response-objects.js';

/**
 * A response's recorded events live in the chat streams' store under the response's id, in a
 * "chat" no chat can be (a chat id has no colon): the chat routes never find them, and the
 * store's expiry, per-user limit and writer's lease (across instances) hold for them too.
 */
const streamChat = (id: string) => `response:${id}`;

/** One recorded event: the response's event as it was sent. */
type Recorded = { readonly type: 'response'; readonly event: ResponseStreamEvent };

/** Records a response's events, in order, once `open` was called (those pushed before wait for it). */
export interface EventRecorder {
  /** Creates the stream and claims it; answers whether it records (not: the user's open streams are at the store's limit). */
  open(): Promise<boolean>;
  push(event: ResponseStreamEvent): void;
  /** Ends the stream once every pushed event is written (once it is open). */
  end(): Promise<void>;
}

export function recordEvents(store: StreamStore, key: { readonly userId: string; readonly id: string; readonly createdAt: Date }): EventRecorder {
  const chatId = streamChat(key.id);
  let start!: () => void;
  let writer: Promise<StreamWriter | undefined> | undefined;
  // Every write waits for the one before; the first for `open`. A write that fails stops the recording.
  let tail: Promise<unknown> = new Promise<void>((resolve) => (start = resolve));
  const then = (step: (w: StreamWriter) => Promise<void>) => {
    tail = tail.then(async () => {
      const w = await writer;
      if (w) await step(w).catch(() => (writer = Promise.resolve(undefined)));
    });
  };
  return {
    open() {
      writer ??= store
        .create({ id: key.id, chatId, userId: key.userId, createdAt: key.createdAt })
        .then(() => store.openWriter(key.userId, chatId, key.id))
        .catch(() => undefined);
      start();
      return writer.then(Boolean);
    },
    push(event) {
      then((w) => w.append({ type: 'response', event } as unknown as StreamRecord));
    },
    end() {
      then((w) => w.end());
      return tail.then(() => {});
    },
  };
}

/** Whether the response's events are recorded (the stream exists and has not expired). */
export async function isRecorded(store: StreamStore, userId: string, id: string): Promise<boolean> {
  return (await store.get(userId, streamChat(id), id)) !== undefined;
}

/** Events recorded so far. */
export function recordedLength(store: StreamStore, id: string): Promise<number> {
  return store.length(id);
}

/**
 * The recorded events after sequence number `after` (all without it), then live ones until the
 * stream ends. An instance that died while writing (its lease ran out) ends it with an
 * `unavailable` error event.
 */
export async function* recordedEvents(store: StreamStore, userId: string, id: string, after: number | undefined, signal?: AbortSignal): AsyncGenerator<ResponseStreamEvent> {
  // Event n of the stream is the one of sequence number n - 1.
  let last = after ?? -1;
  for await (const { data } of store.read(userId, streamChat(id), id, last + 1, signal)) {
    const record = data as unknown as Recorded | Extract<StreamRecord, { type: 'error' }>;
    if (record.type === 'response') {
      if (record.event.sequence_number <= last) continue;
      last = record.event.sequence_number;
      yield record.event;
    } else {
      last += 1;
      yield { type: 'error', sequence_number: last, error: { code: record.code, message: record.message, param: null } };
    }
  }
}

/**
 * A finished response's events, made from the stored resource as its stream would have sent
 * them (each item added, its text or arguments in one delta, done; then the end), after
 * sequence number `after`.
 */
export function* storedEvents(response: ResponseResource, after = -1): Generator<ResponseStreamEvent> {
  let seq = 0;
  const all = function* (): Generator<ResponseStreamEvent> {
    const event = (type: string, body: Record<string, unknown>): ResponseStreamEvent => ({ type, sequence_number: seq++, ...body });
    const opening = { ...response, status: 'in_progress' as const, output: [], usage: null, error: null, incomplete_details: null, completed_at: null };
    yield event('response.created', { response: opening });
    yield event('response.in_progress', { response: opening });
    for (const [index, item] of response.output.entries()) yield* itemEvents(item, index, event);
    if (response.status === 'completed' || response.status === 'incomplete') {
      yield event(`response.${response.status}`, { response });
      return;
    }
    const code: ErrorCode = response.status === 'cancelled' ? 'aborted' : ((response.error?.code as ErrorCode | undefined) ?? 'internal');
    yield event('error', { error: { code, message: response.error?.message ?? 'The response failed', param: null } });
    yield event('response.failed', { response });
  };
  for (const e of all()) if (e.sequence_number > after) yield e;
}

type Emit = (type: string, body: Record<string, unknown>) => ResponseStreamEvent;

function* itemEvents(item: OutputItem, index: number, event: Emit): Generator<ResponseStreamEvent> {
  const at = { item_id: item.id, output_index: index };
  if (item.type === 'message' || item.type === 'reasoning') {
    yield event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
    for (const [content_index, part] of item.content.entries()) {
      const text = { ...at, content_index };
      if (part.type === 'output_text') {
        yield event('response.content_part.added', { ...text, part: { ...part, text: '', annotations: [] } });
        if (part.text) yield event('response.output_text.delta', { ...text, delta: part.text, logprobs: [] });
        for (const [annotation_index, annotation] of part.annotations.entries()) yield event('response.output_text.annotation.added', { ...text, annotation_index, annotation });
        yield event('response.output_text.done', { ...text, text: part.text, logprobs: [] });
      } else {
        yield event('response.content_part.added', { ...text, part: { ...part, text: '' } });
        if (part.text) yield event('response.reasoning_text.delta', { ...text, delta: part.text });
        yield event('response.reasoning_text.done', { ...text, text: part.text });
      }
      yield event('response.content_part.done', { ...text, part });
    }
  } else if (item.type === 'function_call') {
    yield event('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } });
    yield event('response.function_call_arguments.delta', { ...at, delta: item.arguments });
    yield event('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
  } else if (item.type === 'mcp_call' || item.type === 'agent_platform:tool_call') {
    yield event('response.output_item.added', { output_index: index, item: { ...item, output: null, error: null, status: 'in_progress' } });
  } else {
    yield event('response.output_item.added', { output_index: index, item });
  }
  yield event('response.output_item.done', { output_index: index, item });
}
