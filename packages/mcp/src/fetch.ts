import type { ConnectionEvidence } from './evidence.js';

/** The fetch the HTTP transports and detection use (the platform's guarded fetch). */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The transport's fetch: records what fetch threw (the SSE transport flattens errors into text,
 * which would lose a policy refusal or the network error code) and reports a POST response
 * stream that breaks before its end — the server went away mid-call, which the SDK would
 * otherwise only notice at the request's timeout.
 */
export function watchedFetch(base: FetchFunction, evidence: ConnectionEvidence, onStreamLost: (error: unknown) => void): FetchFunction {
  return async (input, init) => {
    let response: Response;
    try {
      response = await base(input, init);
    } catch (error) {
      evidence.fetchError = error;
      throw error;
    }
    const body = response.body;
    if (init?.method !== 'POST' || !body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    const reader = body.getReader();
    const watched = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          if (!init.signal?.aborted) onStreamLost(error);
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
