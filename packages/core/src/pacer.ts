/**
 * Makes `pace()`: it yields to the event loop once `sliceMs` have passed since it last did
 * (or since the pacer was made), else it returns at once. Long stretches of work on the main
 * thread (writing thousands of chunk rows of one document, whose awaits on a synchronous
 * driver never give the loop a turn) call it between steps, so the process still answers other
 * requests, GET /health among them, within about `sliceMs`. Cheap to call often.
 */
export function createPacer(sliceMs = 20): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
