/**
 * Runs `work` while a timer every `intervalMs` measures the longest gap of the event loop
 * (the worst time anything else waited for its turn), including the gap at the end.
 */
export async function worstTick<T>(work: () => Promise<T>, intervalMs = 10): Promise<{ value: T; worst: number }> {
  let worst = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, intervalMs);
  try {
    const value = await work();
    return { value, worst: Math.max(worst, performance.now() - last) };
  } finally {
    clearInterval(ticker);
  }
}
