import type { PlatformError } from '@agent-platform/core';

/** True for an answer in the AWS event stream framing (ConverseStream's). */
export const isAmazonEventStream = (response: Response): boolean => /^\s*application\/vnd\.amazon\.eventstream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');

/**
 * `response` with each message of its AWS event stream bounded by `maxFrameBytes`: a message
 * announces its length in its first four bytes, and the decoder (the AI SDK's) holds the bytes
 * until that many arrived, so a length past the bound fails the body with `tooLarge()` at once
 * and cancels the upstream's, before anything is held. The bytes themselves pass on as they
 * arrive (a length too small to be a message is the decoder's to refuse).
 */
export function limitFrames(response: Response, maxFrameBytes: number, tooLarge: () => PlatformError): Response {
  const source = response.body;
  if (!source) return response;
  /** Bytes of the current message still to pass (0: the next byte starts a message). */
  let remaining = 0;
  /** The length prefix of the next message, while it is split across chunks. */
  let prefix: number[] = [];
  const check = (chunk: Uint8Array): PlatformError | undefined => {
    for (let at = 0; at < chunk.length; ) {
      if (remaining > 0) {
        const step = Math.min(remaining, chunk.length - at);
        remaining -= step;
        at += step;
        continue;
      }
      prefix.push(chunk[at] as number);
      at++;
      if (prefix.length < 4) continue;
      const total = (((prefix[0] as number) << 24) | ((prefix[1] as number) << 16) | ((prefix[2] as number) << 8) | (prefix[3] as number)) >>> 0;
      prefix = [];
      if (total > maxFrameBytes) return tooLarge();
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
