import { type ChatEvent, isPlatformError } from '@agent-platform/core';
import { expect } from 'vitest';

/** Every event of a stream. */
export async function drain(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The `PlatformError` a stream fails with (the test fails when it does not). */
export async function failure(events: AsyncIterable<ChatEvent>): Promise<Error & { code: string; retryable?: boolean; details?: Record<string, unknown> }> {
  const error = await drain(events).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPlatformError(error)).toBe(true);
  return error as Error & { code: string; retryable?: boolean; details?: Record<string, unknown> };
}
