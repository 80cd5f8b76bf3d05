/**
 * The one error type of the core. It never mentions HTTP: the server maps `code` to a status
 * at the edge (see `@agent-platform/server`).
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  /** The caller may not make this request from where it comes (403): a foreign `Origin`. */
  | 'forbidden'
  /** The path exists, not with this method (405). */
  | 'method_not_allowed'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'unsupported'
  | 'upstream_error'
  /** An upstream is down or unreachable (503). */
  | 'unavailable'
  | 'timeout'
  | 'aborted'
  | 'internal';

/** One problem found in a request, zod's issue shape without the offending input. */
export interface ValidationIssue {
  /** Where the problem is, e.g. `["limit"]` or `["settings", "topK"]`. */
  readonly path: readonly (string | number)[];
  /** zod's issue code, e.g. `too_small`, `invalid_type`. */
  readonly code: string;
  readonly message: string;
}

export interface PlatformErrorOptions {
  readonly details?: Record<string, unknown>;
  /** Validation problems, for `invalid_request`. */
  readonly issues?: readonly ValidationIssue[];
  /** True when the same call may succeed later (upstream failures). */
  readonly retryable?: boolean;
  readonly cause?: unknown;
}

const MARKER = Symbol.for('agent-platform.PlatformError');

export class PlatformError extends Error {
  override readonly name = 'PlatformError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly issues: readonly ValidationIssue[] | undefined;
  readonly retryable: boolean;
  readonly [MARKER] = true;

  constructor(code: ErrorCode, message: string, options: PlatformErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
    this.issues = options.issues;
    this.retryable = options.retryable ?? false;
  }

  static invalid(message: string, issues?: readonly ValidationIssue[]): PlatformError {
    return new PlatformError('invalid_request', message, issues ? { issues } : {});
  }

  static notFound(message: string): PlatformError {
    return new PlatformError('not_found', message);
  }
}

/**
 * True for a `PlatformError`, also one created by another copy of this package (a marker, not
 * `instanceof`).
 */
export function isPlatformError(value: unknown): value is PlatformError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
}
