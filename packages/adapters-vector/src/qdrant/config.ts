import { baseUrlProblem } from '@agent-platform/core/internal';
import { z } from 'zod';
import { httpUrl, invalidConfiguration, requiredString } from '../config.js';

/** Characters Qdrant refuses in a collection name (it also limits names to 255 characters). */
const FORBIDDEN_NAME_CHARS = /[<>:"/\\|?*]/;
/** Names a URL path cannot carry: the URL parser reads them as "this folder" and "the parent folder", whatever their escaping. */
const isDotSegment = (name: string) => name === '.' || name === '..';
const hasControlCharacter = (name: string) => [...name].some((ch) => ch.charCodeAt(0) < 0x20);

/** Why `value` is not a usable endpoint, or undefined. */
function endpointProblem(value: string): string | undefined {
  const url = httpUrl(value);
  if (!url) return 'endpoint must be an http(s) URL';
  if (url.username || url.password) return 'endpoint must not carry credentials (put the key in apiKey)';
  const base = baseUrlProblem(value);
  if (base) return `endpoint ${base}`;
  return undefined;
}

const endpoint = requiredString('endpoint', ' for qdrant').superRefine((value, ctx) => {
  const message = endpointProblem(value);
  if (message) ctx.addIssue({ code: 'custom', message });
});

const schema = z.strictObject(
  {
    indexName: requiredString('indexName')
      .min(1, 'indexName must not be empty')
      .max(255, 'indexName must be at most 255 characters')
      .refine((name) => !FORBIDDEN_NAME_CHARS.test(name) && !hasControlCharacter(name), 'indexName must not contain < > : " / \\ | ? * or control characters (Qdrant\'s rule for collection names)')
      .refine((name) => name.trim() === name, 'indexName must not start or end with spaces')
      .refine((name) => !isDotSegment(name), 'indexName must not be "." or ".." (a URL path reads them as folders, not as a collection)'),
    endpoint,
    // Forms send "" or null for an empty field: both mean "no key".
    apiKey: z
      .union([z.string(), z.null()], { error: 'apiKey must be a string' })
      .optional()
      .transform((key) => (key ? key : undefined)),
  },
  {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => `"${k}"`).join(', ');
        return `unknown key${issue.keys.length > 1 ? 's' : ''} ${keys} (qdrant takes indexName, endpoint, apiKey)`;
      }
      if (issue.code === 'invalid_type') return 'vectorStoreConfig must be an object';
      return undefined;
    },
  },
);

/** `settings.vectorStoreConfig` of a project whose `vectorstoreProvider` is `qdrant`. */
export interface QdrantConfig {
  /** The collection that holds the vectors of every namespace (project + embedding model). */
  readonly indexName: string;
  /**
   * Base URL of Qdrant's REST API, e.g. `http://127.0.0.1:6333` or
   * `https://xyz.eu-central.aws.cloud.qdrant.io:6333`. Without a port the client uses 6333 (as
   * Qdrant's own clients do): write `:443` for a proxy on the standard HTTPS port. A path is
   * kept as a prefix (`https://proxy.example.com:443/qdrant`).
   */
  readonly endpoint: string;
  /** Sent as the `api-key` header. Optional (a local Qdrant usually has none). */
  readonly apiKey?: string;
}

/**
 * Validates a Qdrant `vectorStoreConfig`. Throws `PlatformError.invalid('Invalid vectorstore
 * configuration: …')` naming each wrong key (missing, wrong type, bad URL, unknown key).
 *
 * @example
 * parseQdrantConfig({ indexName: 'agent-platform', endpoint: 'http://127.0.0.1:6333' });
 */
export function parseQdrantConfig(config: unknown): QdrantConfig {
  const parsed = schema.safeParse(config);
  if (parsed.success) {
    const { indexName, endpoint, apiKey } = parsed.data;
    return apiKey === undefined ? { indexName, endpoint } : { indexName, endpoint, apiKey };
  }
  throw invalidConfiguration(parsed.error);
}
