import { connect } from 'node:net';
import { isPlatformError, PlatformError } from '@agent-platform/core';
import { answerTooLargeIn } from '@agent-platform/core/internal';

export interface ErrorContext {
  /** The configured REST endpoint, for messages (the config refuses credentials in it). */
  readonly endpoint: string;
  /** The gRPC address the client uses. */
  readonly grpc: { readonly host: string; readonly port: number };
  readonly timeoutMs: number;
  readonly hasApiKey: boolean;
}

const shorten = (text: string) => {
  const t = text.trim();
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
};

/** The network-level reason of a failed fetch (`connect ECONNREFUSED 127.0.0.1:8080`). */
function networkReason(error: Error): string {
  let reason: unknown = error;
  // undici: TypeError('fetch failed') whose cause is the socket error (sometimes nested once more).
  for (let i = 0; i < 3 && reason instanceof Error && reason.cause instanceof Error; i++) reason = reason.cause;
  const e = reason as Error & { code?: string };
  return e.message || e.code || 'unknown network error';
}

/**
 * A gRPC failure as the client reports it: it wraps nice-grpc's `ClientError` (`/weaviate.v1.Weaviate/Search
 * UNAVAILABLE: No connection established…`) into its own error classes, keeping only the text.
 */
const GRPC_FAILURE = /\/weaviate\.v1\.Weaviate\/\w+ ([A-Z_]+): ([\s\S]*)$/;

const invalidKey = (status: number, ctx: ErrorContext) =>
  PlatformError.invalid(`Invalid vectorstore configuration: ${!ctx.hasApiKey && status === 401 ? 'Weaviate requires an API key (401): set apiKey' : `Weaviate refused the API key (${status})`}`);

export const unavailable = (ctx: ErrorContext, reason: string, cause?: unknown) =>
  new PlatformError('unavailable', `Weaviate at ${ctx.endpoint} could not be reached: ${reason}`, { retryable: true, cause });

const timedOut = (ctx: ErrorContext, cause?: unknown) => new PlatformError('timeout', `Weaviate at ${ctx.endpoint} did not answer within ${ctx.timeoutMs} ms`, { retryable: true, cause });

/** True when Weaviate answered 404 over REST (a missing class, for the calls the store makes). */
export const isNotFound = (error: unknown): boolean => (error as { name?: string; code?: unknown })?.name === 'WeaviateUnexpectedStatusCodeError' && (error as { code?: unknown }).code === 404;

/** True when Weaviate answered 422 "already exists" to a class creation (someone else created it meanwhile). */
export const isAlreadyExists = (error: unknown): boolean =>
  (error as { name?: string })?.name === 'WeaviateUnexpectedStatusCodeError' && (error as { code?: unknown }).code === 422 && /already exists/i.test((error as Error).message);

/**
 * Maps what the Weaviate client throws to a `PlatformError`: unreachable → `unavailable`
 * (retryable), timeout → `timeout`, 401/403 (REST) or UNAUTHENTICATED/PERMISSION_DENIED (gRPC) →
 * `invalid_request` (the configuration's key), 429 → `rate_limited`, other answers →
 * `upstream_error` with Weaviate's status or gRPC code, never its own text (an address a caller
 * chose could answer anything). Messages never contain the API key.
 */
export function toPlatformError(error: unknown, ctx: ErrorContext): PlatformError {
  if (isPlatformError(error)) return error;
  const tooLarge = answerTooLargeIn(error);
  if (tooLarge) return tooLarge;
  if (!(error instanceof Error)) return new PlatformError('upstream_error', `Weaviate call failed: ${String(error)}`, { cause: error });
  const { name, message } = error;
  const status = (error as { code?: unknown }).code;
  if (name === 'WeaviateRequestTimeoutError') return timedOut(ctx, error);
  if (name === 'WeaviateUnauthenticatedError') return invalidKey(401, ctx);
  if (name === 'WeaviateInsufficientPermissionsError') return invalidKey(403, ctx);
  if (name === 'WeaviateUnexpectedStatusCodeError' && typeof status === 'number') {
    if (status === 401 || status === 403) return invalidKey(status, ctx);
    if (status === 429) return new PlatformError('rate_limited', `Weaviate at ${ctx.endpoint} answered 429`, { retryable: true, details: { status }, cause: error });
    return new PlatformError('upstream_error', `Weaviate at ${ctx.endpoint} answered ${status}`, { retryable: status >= 500, details: { status }, cause: error });
  }
  const grpc = GRPC_FAILURE.exec(message);
  if (grpc) {
    const [, code = '', details = ''] = grpc;
    if (code === 'UNAVAILABLE') return unavailable(ctx, `gRPC at ${ctx.grpc.host}:${ctx.grpc.port}: ${shorten(details)}`, error);
    if (code === 'DEADLINE_EXCEEDED' || code === 'CANCELLED') return timedOut(ctx, error);
    if (code === 'UNAUTHENTICATED') return invalidKey(401, ctx);
    if (code === 'PERMISSION_DENIED') return invalidKey(403, ctx);
    if (code === 'RESOURCE_EXHAUSTED') return new PlatformError('rate_limited', `Weaviate at ${ctx.endpoint} answered gRPC ${code}`, { retryable: true, cause: error });
    return new PlatformError('upstream_error', `Weaviate at ${ctx.endpoint} answered gRPC ${code}`, { cause: error });
  }
  if (error instanceof TypeError && error.cause !== undefined) {
    // fetch() rejects with TypeError('fetch failed', { cause }) for anything below HTTP: refused,
    // reset, DNS, TLS.
    return unavailable(ctx, networkReason(error), error);
  }
  // JSON.parse's message quotes the text it could not read: not repeated.
  if (error instanceof SyntaxError) return new PlatformError('upstream_error', `Weaviate at ${ctx.endpoint} answered with a body that is not JSON`, { cause: error });
  // The client's other errors carry the server's words: their kind only.
  return new PlatformError('upstream_error', `Weaviate at ${ctx.endpoint}: the call failed (${name})`, { cause: error });
}

/** How long a gRPC call may run before the gRPC port is probed. */
const PROBE_AFTER_MS = 250;

/**
 * Why the gRPC address cannot be connected to (a TCP connect), or undefined when it can (or the
 * probe itself took too long: the deadline decides then).
 */
function probe(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: host.replace(/^\[(.*)\]$/, '$1'), port });
    const done = (reason?: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(), timeoutMs);
    socket.once('connect', () => done());
    socket.once('error', (e) => done(e.message));
  });
}

export interface GuardOptions {
  /**
   * The call goes over gRPC: probe the port while it runs (see below), at the address this
   * answers (the one the gRPC connection was checked and pinned to), when it answers one.
   */
  readonly grpc?: () => { readonly host: string; readonly port: number } | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Runs one request to Weaviate under the store's per-request deadline (`timeout`), the caller's
 * signal (`aborted`), and the error mapping above.
 *
 * Why the probe: the client retries a gRPC call that finds no server (UNAVAILABLE) up to 5 times
 * with backoff (0.5 s, 1 s, 2 s, …), so a stopped Weaviate would surface only as a timeout. When a
 * gRPC call has not answered within 250 ms, a TCP connect to the gRPC port tells whether anything
 * listens there: if not, the call fails at once as `unavailable`.
 */
export function guarded<T>(op: Promise<T>, ctx: ErrorContext, options: GuardOptions = {}): Promise<T> {
  // The client's own promise may settle after the guard gave up: it must not be an unhandled rejection.
  op.catch(() => {});
  const { signal } = options;
  return new Promise<T>((resolve, reject) => {
    const timers: NodeJS.Timeout[] = [];
    let settled = false;
    const onAbort = () => finish(() => reject(new PlatformError('aborted', 'The Weaviate call was cancelled')));
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    op.then(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(toPlatformError(error, ctx))),
    );
    timers.push(setTimeout(() => finish(() => reject(timedOut(ctx))), ctx.timeoutMs));
    if (options.grpc && ctx.timeoutMs > PROBE_AFTER_MS) {
      const probeAt = options.grpc;
      timers.push(
        setTimeout(() => {
          const at = probeAt();
          if (!at) return;
          void probe(at.host, at.port, Math.min(2000, ctx.timeoutMs - PROBE_AFTER_MS)).then((reason) => {
            if (reason) finish(() => reject(unavailable(ctx, `gRPC at ${ctx.grpc.host}:${ctx.grpc.port}: ${reason}`)));
          });
        }, PROBE_AFTER_MS),
      );
    }
  });
}
