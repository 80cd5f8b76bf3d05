import { PlatformError } from '@agent-platform/core';
import { baseUrlProblem } from '@agent-platform/core/internal';
import { z } from 'zod';

/** Pinecone's public control plane, used when `endpoint` is not given. */
export const DEFAULT_PINECONE_ENDPOINT = 'https://api.pinecone.io';

/** Pinecone's rule for index names: 1-45 characters, lower-case letters, digits and '-', not starting or ending with '-'. */
const INDEX_NAME = /^[a-z0-9](?:[a-z0-9-]{0,43}[a-z0-9])?$/;

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
};

/** Keeps secrets out of the URL (stored in the clear and named in messages), as the other stores' endpoints do. */
const hasNoSecrets = (value: string) => {
  try {
    const url = new URL(value);
    return !url.username && !url.password && baseUrlProblem(value) === undefined;
  } catch {
    return true;
  }
};

const pineconeConfigSchema = z.strictObject({
  indexName: z
    .string({ error: (issue) => (issue.input === undefined ? 'indexName is required' : 'indexName must be a string') })
    .regex(INDEX_NAME, 'indexName must be 1-45 lower-case letters, digits or "-" (Pinecone\'s rule for index names)'),
  apiKey: z
    .string({ error: (issue) => (issue.input === undefined ? 'apiKey is required for pinecone' : 'apiKey must be a string') })
    .trim()
    .min(1, 'apiKey is required for pinecone'),
  endpoint: z
    .string({ error: 'endpoint must be a string' })
    .refine(isHttpUrl, 'endpoint must be an http(s) URL')
    .refine(hasNoSecrets, 'endpoint must not carry credentials, a query or a fragment (put the key in apiKey)')
    .optional(),
  /** Pod-based projects named an environment; serverless ones need none. Accepted and ignored. */
  environment: z.string({ error: 'environment must be a string' }).optional(),
});

export interface PineconeConfig {
  /** The index that holds the vectors of every namespace (a namespace = project + embedding model). */
  readonly indexName: string;
  readonly apiKey: string;
  /** Control-plane URL (`controllerHostUrl` of the client). Default https://api.pinecone.io. */
  readonly endpoint: string;
}

/**
 * Parses a project's `vectorStoreConfig` for Pinecone. Throws `PlatformError` `invalid_request`
 * "Invalid vectorstore configuration: <what is wrong>" naming the key (unknown keys too).
 *
 * @example
 * parsePineconeConfig({ indexName: 'agent-platform', apiKey: process.env.PINECONE_API_KEY });
 */
export function parsePineconeConfig(config: unknown): PineconeConfig {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw PlatformError.invalid('Invalid vectorstore configuration: it must be an object with indexName and apiKey for pinecone');
  }
  const parsed = pineconeConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: ['settings', 'vectorStoreConfig', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
      code: issue.code,
      message: issue.code === 'unrecognized_keys' ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} for pinecone` : issue.message,
    }));
    throw PlatformError.invalid(`Invalid vectorstore configuration: ${issues.map((i) => i.message).join('; ')}`, issues);
  }
  const { indexName, apiKey, endpoint } = parsed.data;
  // As the URL parser reads it (the client joins it with paths as text).
  return { indexName, apiKey, endpoint: new URL(endpoint ?? DEFAULT_PINECONE_ENDPOINT).href.replace(/\/+$/, '') };
}
