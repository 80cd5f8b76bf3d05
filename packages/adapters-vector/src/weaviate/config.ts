import { baseUrlProblem } from '@agent-platform/core/internal';
import { z } from 'zod';
import { httpUrl, invalidConfiguration, requiredString } from '../config.js';

/**
 * Weaviate's rule for class (collection) names: a GraphQL name starting with a capital letter,
 * at most 255 characters. Weaviate itself capitalises the first letter of a name it is given,
 * and so does this adapter (`agentPlatform` is stored as `AgentPlatform`).
 */
const CLASS_NAME = /^[A-Za-z][_0-9A-Za-z]{0,254}$/;

/** Why `value` is not a usable http(s) URL for `key`, or undefined. */
function urlProblem(key: string, value: string, allowPath: boolean): string | undefined {
  const url = httpUrl(value);
  if (!url) return `${key} must be an http(s) URL`;
  if (url.username || url.password) return `${key} must not carry credentials (put the key in apiKey)`;
  const base = baseUrlProblem(value);
  if (base) return `${key} ${base}`;
  if (!allowPath && url.pathname !== '/' && url.pathname !== '') return `${key} must not have a path (gRPC is served at the root)`;
  return undefined;
}

const url = (key: string, required: string, allowPath: boolean) =>
  requiredString(key, required).superRefine((value, ctx) => {
    const message = urlProblem(key, value, allowPath);
    if (message) ctx.addIssue({ code: 'custom', message });
  });

/** Forms send "" or null for an empty field: both mean "not set". */
const optional = <T extends z.ZodType<string>>(inner: T) => z.preprocess((v) => (v === '' || v === null ? undefined : v), inner.optional());

const KEYS = 'indexName, endpoint, apiKey, grpcEndpoint';

const schema = z.strictObject(
  {
    indexName: requiredString('indexName').refine(
      (name) => CLASS_NAME.test(name),
      "indexName must be a Weaviate class name: a letter, then letters, digits or _ (at most 255 characters; Weaviate's rule for class names)",
    ),
    endpoint: url('endpoint', ' for weaviate', true),
    apiKey: optional(requiredString('apiKey')),
    grpcEndpoint: optional(url('grpcEndpoint', '', false)),
  },
  {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => `"${k}"`).join(', ');
        return `unknown key${issue.keys.length > 1 ? 's' : ''} ${keys} (weaviate takes ${KEYS})`;
      }
      if (issue.code === 'invalid_type') return 'vectorStoreConfig must be an object';
      return undefined;
    },
  },
);

/** `settings.vectorStoreConfig` of a project whose `vectorstoreProvider` is `weaviate`. */
export interface WeaviateConfig {
  /**
   * The class (collection) that holds the vectors of every namespace (project + embedding
   * model). A Weaviate class name; its first letter is capitalised as Weaviate does.
   */
  readonly indexName: string;
  /**
   * Base URL of Weaviate's REST API, e.g. `http://127.0.0.1:8080` or
   * `https://xyz.c0.europe-west3.gcp.weaviate.cloud`. Without a port: 80 for http, 443 for https.
   * A path is kept as a prefix (`https://proxy.example.com/weaviate`).
   */
  readonly endpoint: string;
  /** Sent as `Authorization: Bearer <apiKey>` (REST and gRPC). Optional (anonymous access). */
  readonly apiKey?: string;
  /**
   * Address of Weaviate's gRPC API as a URL (`https://` for TLS), e.g. `http://127.0.0.1:50051`.
   * Default: Weaviate Cloud's `grpc-<host>:443` for `*.weaviate.cloud` (and
   * `<cluster>.grpc.<rest>` for `*.weaviate.network`), else the endpoint's host on port 50051
   * with the endpoint's scheme.
   */
  readonly grpcEndpoint?: string;
}

/** Where the client connects, derived from a parsed config (IPv6 hosts keep their brackets, as the client joins host and port). */
export interface WeaviateConnection {
  readonly className: string;
  readonly http: { readonly host: string; readonly port: number; readonly secure: boolean; readonly path: string };
  readonly grpc: { readonly host: string; readonly port: number; readonly secure: boolean };
}

const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

/** The REST and gRPC addresses and the class name of a config (see `WeaviateConfig.grpcEndpoint`). */
export function weaviateConnection(config: WeaviateConfig): WeaviateConnection {
  const rest = new URL(config.endpoint);
  const secure = rest.protocol === 'https:';
  const http = { host: rest.hostname, port: portOf(rest), secure, path: rest.pathname.replace(/\/+$/, '') };
  const className = config.indexName.charAt(0).toUpperCase() + config.indexName.slice(1);
  if (config.grpcEndpoint) {
    const g = new URL(config.grpcEndpoint);
    return { className, http, grpc: { host: g.hostname, port: portOf(g), secure: g.protocol === 'https:' } };
  }
  const host = http.host.toLowerCase();
  // Weaviate Cloud serves gRPC on its own host name (as the client's connectToWeaviateCloud derives it).
  if (host.endsWith('.weaviate.network')) {
    const [ident, ...rest] = host.split('.');
    return { className, http, grpc: { host: `${ident}.grpc.${rest.join('.')}`, port: 443, secure: true } };
  }
  if (host.endsWith('.weaviate.cloud')) return { className, http, grpc: { host: `grpc-${host}`, port: 443, secure: true } };
  return { className, http, grpc: { host: http.host, port: 50051, secure } };
}

/**
 * Validates a Weaviate `vectorStoreConfig`. Throws `PlatformError.invalid('Invalid vectorstore
 * configuration: …')` naming each wrong key (missing, wrong type, bad URL, bad class name,
 * unknown key).
 *
 * @example
 * parseWeaviateConfig({ indexName: 'AgentPlatform', endpoint: 'http://127.0.0.1:8080' });
 */
export function parseWeaviateConfig(config: unknown): WeaviateConfig {
  const parsed = schema.safeParse(config);
  if (parsed.success) {
    const { indexName, endpoint, apiKey, grpcEndpoint } = parsed.data;
    return { indexName, endpoint, ...(apiKey === undefined ? {} : { apiKey }), ...(grpcEndpoint === undefined ? {} : { grpcEndpoint }) };
  }
  throw invalidConfiguration(parsed.error);
}
