import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { FetchFunction } from './fetch.js';

interface SseTransportOptions {
  readonly fetch: FetchFunction;
  readonly eventSourceInit: { readonly fetch: FetchFunction };
  readonly requestInit?: RequestInit | undefined;
}

/** The SDK's legacy SSE client transport; its EventSource and POSTs both use `fetch`. */
export async function createSseTransport(url: URL, options: SseTransportOptions): Promise<Transport> {
  return new SSEClientTransport(url, options as ConstructorParameters<typeof SSEClientTransport>[1]);
}

/** The SDK's `SseError` (`SSE error: <message>`, with the EventSource's error event and HTTP status as `code`). */
export function isSseError(error: unknown): error is SseError {
  return error instanceof SseError;
}
