import { type ChatModel, type ChatRequest, collectChat, createGuardedFetch, createOutboundPolicy } from '@agent-platform/core';
import { expect } from 'vitest';
import { failure } from './chat-events.js';

/** A fake's record of what it was asked: its requests, and how the last exchange ended. */
interface Recorded {
  readonly requests: readonly { readonly ended: Promise<'completed' | 'client_closed'> }[];
  lastRequest(): { readonly ended: Promise<'completed' | 'client_closed'> } | undefined;
}

/**
 * The model goes only through the fetch it is given: behind the outbound policy (which refuses
 * loopback addresses by default) a call and `listModels` reject with the policy's error and the
 * fake gets no request; once the policy allows the address, the same fetch reaches it.
 */
export async function expectOnlyThroughFetch(make: (fetch: typeof globalThis.fetch) => ChatModel, fake: Recorded, request: ChatRequest): Promise<void> {
  const guarded = createGuardedFetch(createOutboundPolicy());
  try {
    const error = await failure(make(guarded as unknown as typeof fetch).stream(request));
    expect(error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Refused to connect to 127\.0\.0\.1/) });
    await expect(make(guarded as unknown as typeof fetch).listModels?.()).rejects.toMatchObject({ code: 'invalid_request' });
    expect(fake.requests).toHaveLength(0);
    const allowed = guarded.withPolicy(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }));
    expect((await collectChat(make(allowed as unknown as typeof fetch).stream(request))).content.length).toBeGreaterThan(0);
  } finally {
    await guarded.close();
  }
}

/** Aborting after two events stops the call as `aborted`, and the fake sees the connection close. (Script a slow, long answer first.) */
export async function expectAbortClosesUpstream(model: ChatModel, fake: Recorded, request: ChatRequest): Promise<void> {
  const controller = new AbortController();
  let seen = 0;
  const aborted = await failure(
    (async function* () {
      for await (const event of model.stream({ ...request, signal: controller.signal })) {
        if (++seen === 2) controller.abort();
        yield event;
      }
    })(),
  );
  expect(aborted.code).toBe('aborted');
  expect(await fake.lastRequest()?.ended).toBe('client_closed');
}
