import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimitName, type DocumentLimits } from '@agent-platform/core';
import { integerFlagsFrom } from './integer-flags.js';

/** A document limit as `agent-platform serve` takes it: a flag and an env variable. */
export interface DocumentLimitFlag {
  /** Without the leading `--`. */
  readonly flag: string;
  readonly env: string;
  readonly limit: DocumentLimitName;
  /** Smallest value that makes sense. */
  readonly min: number;
}

/** Every document limit's flag and env variable (documented in README.md and `serve --help`). */
export const DOCUMENT_LIMIT_FLAGS: readonly DocumentLimitFlag[] = [
  { flag: 'document-timeout', env: 'AGENT_PLATFORM_DOCUMENT_TIMEOUT_MS', limit: 'timeoutMs', min: 100 },
  { flag: 'document-memory', env: 'AGENT_PLATFORM_DOCUMENT_MEMORY_MB', limit: 'memoryMb', min: 64 },
  { flag: 'max-document-pages', env: 'AGENT_PLATFORM_MAX_DOCUMENT_PAGES', limit: 'maxPages', min: 1 },
  { flag: 'max-document-unzipped', env: 'AGENT_PLATFORM_MAX_DOCUMENT_UNZIPPED', limit: 'maxUnzippedBytes', min: 1024 },
  { flag: 'max-document-nesting', env: 'AGENT_PLATFORM_MAX_DOCUMENT_NESTING', limit: 'maxNesting', min: 8 },
  { flag: 'max-document-chars', env: 'AGENT_PLATFORM_MAX_DOCUMENT_CHARS', limit: 'maxTextLength', min: 1 },
  { flag: 'max-document-chunks', env: 'AGENT_PLATFORM_MAX_DOCUMENT_CHUNKS', limit: 'maxChunks', min: 1 },
];

/** How the error of a document over a limit tells the operator to set it: the flag. */
export const DOCUMENT_LIMIT_HINTS: Readonly<Record<DocumentLimitName, string>> = Object.fromEntries(DOCUMENT_LIMIT_FLAGS.map((f) => [f.limit, `--${f.flag}`])) as Record<DocumentLimitName, string>;

/** The flags the knowledge base's errors name: the document limits', and the bound on a user's queue. */
export const KNOWLEDGE_LIMIT_HINTS = { ...DOCUMENT_LIMIT_HINTS, maxQueuedDocuments: '--max-queued-documents-per-user' } as const;

/**
 * The limits given as flags (`values`, by flag name) or else env variables; throws an `Error`
 * naming the flag for a value that is not an integer from the flag's minimum up.
 */
export function documentLimitsFrom(values: Readonly<Record<string, string | undefined>>, env: NodeJS.ProcessEnv): DocumentLimits {
  return integerFlagsFrom(
    DOCUMENT_LIMIT_FLAGS.map((f) => ({ flag: f.flag, env: f.env, key: f.limit, min: f.min, defaultValue: DEFAULT_DOCUMENT_LIMITS[f.limit] })),
    values,
    env,
  );
}
