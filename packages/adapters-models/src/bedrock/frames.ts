import type { PlatformError } from '@agent-platform/core';

/** True for an answer in the AWS event stream framing (ConverseStream's). */
export const isAmazonEventStream = (response: Response): boolean => /^\s*application\/vnd\.amazon\.eventstream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');

const u32 = (bytes: Uint8Array, at: number): number => (((bytes[at] as number) << 24) | ((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number)) >>> 0;
const utf8 = new TextDecoder();
const sizeOf = (value: unknown): number => (typeof value === 'string' ? Buffer.byteLength(value) : 0);

/**
 * The bytes of a `contentBlockDelta` message that the AI SDK holds instead of handing them on:
 * the input of its forced `json` tool (kept whole until the block stops, then one text delta)
 * and redacted reasoning (kept for the block's end). Counted for every tool, as the adapter
 * counts the other tools' inputs anyway. 0 for any other message, or one the decoder will refuse.
 */
function heldBytes(message: Uint8Array): number {
  if (message.length < 16) return 0;
  const headersEnd = 12 + u32(message, 4);
  if (headersEnd > message.length - 4 || !utf8.decode(message.subarray(12, headersEnd)).includes('contentBlockDelta')) return 0;
  try {
    const delta = (JSON.parse(utf8.decode(message.subarray(headersEnd, message.length - 4))) as { delta?: { toolUse?: { input?: unknown }; reasoningContent?: { redactedContent?: unknown } } })?.delta;
    return sizeOf(delta?.toolUse?.input) + sizeOf(delta?.reasoningContent?.redactedContent);
  } catch {
    return 0;
  }
}

/**
 * `response` with its AWS event stream bounded by `maxBytes`: each message, and what the AI
 * SDK holds of the answer before it hands it on (see `heldBytes`). A message announces its
 * length in its first four bytes, and the decoder holds the bytes until that many arrived, so a
 * length past the bound fails the body with `tooLarge('an event')` at once and cancels the
 * upstream's, before anything is held; held tool input past the bound fails it with
 * `tooLarge('an answer')`. The bytes themselves pass on as they arrive (a length too small to
 * be a message is the decoder's to refuse).
 */
export function limitFrames(response: Response, maxBytes: number, tooLarge: (what: 'an event' | 'an answer') => PlatformError): Response {
  const source = response.body;
  if (!source) return response;
  /** Bytes of the current message still to come (0: the next byte starts a message). */
  let remaining = 0;
  /** The current message's bytes so far (at most `maxBytes`: its length was checked). */
  let message: Uint8Array = new Uint8Array(0);
  let filled = 0;
  /** The length prefix of the next message, while it is split across chunks. */
  let prefix: number[] = [];
  let held = 0;
  const check = (chunk: Uint8Array): PlatformError | undefined => {
    for (let at = 0; at < chunk.length; ) {
      if (remaining > 0) {
        const step = Math.min(remaining, chunk.length - at);
        message.set(chunk.subarray(at, at + step), filled);
        filled += step;
        remaining -= step;
        at += step;
        if (remaining === 0) {
          held += heldBytes(message);
          if (held > maxBytes) return tooLarge('an answer');
        }
        continue;
      }
      prefix.push(chunk[at] as number);
      at++;
      if (prefix.length < 4) continue;
      const total = u32(Uint8Array.from(prefix), 0);
      if (total > maxBytes) return tooLarge('an event');
      message = new Uint8Array(Math.max(total, 4));
      message.set(prefix);
      filled = 4;
      prefix = [];
      remaining = Math.max(0, total - 4);
    }
    return undefined;
  };
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          controller.error(error);
          return;
        }
        if (next.done) {
          controller.close();
          return;
        }
        const error = check(next.value);
        if (error) {
          reader.cancel(error).catch(() => undefined);
          controller.error(error);
          return;
        }
        controller.enqueue(next.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  const bounded = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(bounded, 'url', { value: response.url });
  return bounded;
}
