/**
 * A request body that arrives in pieces of `size()` bytes, one per turn of the event loop, as a
 * client's bytes come off a socket. `state.sent` counts the bytes handed over; `state.cancelled`
 * tells whether the reader gave up on the rest.
 */
export function trickle(bytes: Uint8Array, size: () => number): { stream: ReadableStream<Uint8Array>; state: { sent: number; cancelled: boolean } } {
  const state = { sent: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setImmediate(resolve));
      if (state.sent >= bytes.length) return controller.close();
      // A copy: each piece has memory of its own, as chunks read from a socket do.
      const piece = bytes.slice(state.sent, state.sent + Math.max(1, size()));
      state.sent += piece.length;
      controller.enqueue(piece);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

/** A POST of `body` (a stream needs `duplex: 'half'`). */
export const postBody = (body: BodyInit | ReadableStream<Uint8Array> | Uint8Array, headers: Record<string, string> = {}): Request =>
  new Request('http://in-process/', { method: 'POST', headers, body: body as BodyInit, duplex: 'half' } as RequestInit);
