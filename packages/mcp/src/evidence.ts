import type { PlatformError } from '@agent-platform/core';

/** Failures a connection observed on the side: they explain errors the SDK reports vaguely. */
export interface ConnectionEvidence {
  /** The last error the transport's fetch threw (network failure or policy refusal). */
  fetchError?: unknown;
  /** Something arrived that is not JSON-RPC (stdout garbage, bad JSON). */
  protocolError?: unknown;
  /** The last ~2 KB of a stdio server's stderr. */
  stderr?: () => string;
  /** An answer passed the message limit (`answerTooLarge`): every failure after it on this connection is that. */
  tooLarge?: PlatformError;
}
