import { isIP } from 'node:net';
import { baseUrlProblem } from '@agent-platform/core/internal';
import { z } from 'zod';
import { httpUrl, invalidConfiguration, requiredString } from '../config.js';

/**
 * Chroma's rule for collection names (its server answers 400 to anything else): 3-512 letters,
 * digits, ".", "_" and "-", starting and ending with a letter or digit, no "..", not an IP
 * address.
 */
const COLLECTION_NAME = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{1,510})[a-zA-Z0-9]$/;
const COLLECTION_RULE =
  'indexName must be 3-512 characters of letters, digits, ".", "_" and "-", starting and ending with a letter or digit, without ".." and not an IP address (Chroma\'s rule for collection names)';

/** Chroma's rule for tenant and database names: at least 3 characters (which also keeps "." and ".." out of its URL paths). */
const containerName = (key: string) =>
  text(key)
    .min(3, { error: `${key} must be at least 3 characters (Chroma's rule for ${key} names)` })
    .optional();

const text = (key: string, requiredSuffix = '') => requiredString(key, requiredSuffix).min(1, { error: `${key} must not be empty` });

const optionalText = (key: string) => text(key).optional();

function endpointProblem(value: string): string | undefined {
  const url = httpUrl(value);
  if (!url) return 'endpoint must be an http(s) URL';
  // Keeps secrets out of the URL, which appears in error messages.
  if (url.username || url.password) return 'endpoint must not contain credentials (put the token in apiKey)';
  // chromadb 3.5 builds its URLs from host, port and protocol only: a path would be dropped.
  if (url.pathname !== '/' || baseUrlProblem(value)) return "endpoint must be the server's root URL, without a path, query string or fragment (e.g. http://127.0.0.1:8000)";
  return undefined;
}

const schema = z.strictObject(
  {
    /** Base URL of the Chroma server, e.g. `http://127.0.0.1:8000`; without a port, 80 or 443. */
    endpoint: text('endpoint', ' for chroma').superRefine((value, ctx) => {
      const problem = endpointProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    /** The collection that holds the vectors of every project using this configuration. */
    indexName: text('indexName').refine((name) => COLLECTION_NAME.test(name) && !name.includes('..') && isIP(name) === 0, { error: COLLECTION_RULE }),
    /** Sent as the `x-chroma-token` header. */
    apiKey: optionalText('apiKey'),
    /** Default `default_tenant`. */
    tenant: containerName('tenant'),
    /** Default `default_database`; it must exist (the adapter does not create databases). */
    database: containerName('database'),
  },
  {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} (chroma takes endpoint, indexName, apiKey, tenant, database)`;
      if (issue.code === 'invalid_type') return 'expected an object with endpoint and indexName';
      return undefined;
    },
  },
);

/** A parsed `vectorStoreConfig` of the `chroma` provider. */
export type ChromaConfig = z.output<typeof schema>;

/**
 * Parses a project's `vectorStoreConfig` for Chroma. Throws `invalid_request`
 * ("Invalid vectorstore configuration: …") naming each key that is wrong, missing or unknown.
 *
 * @example
 * parseChromaConfig({ endpoint: 'http://127.0.0.1:8000', indexName: 'agent-platform' });
 */
export function parseChromaConfig(config: unknown): ChromaConfig {
  const result = schema.safeParse(config);
  if (result.success) return result.data;
  throw invalidConfiguration(result.error);
}
