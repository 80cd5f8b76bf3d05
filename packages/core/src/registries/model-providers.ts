/**
 * The model providers a project, a completion or a credential can name (DESIGN.md, "Model
 * providers"), declared once: the schemas' enums (`Provider`, `CredentialProvider`, the
 * completion's `provider`), `provider:model` names and the server's chat model factories
 * (`satisfies Record<ModelProviderId, …>`) all come from this table. Entries are data: the
 * adapters live in `@agent-platform/adapters-models`, the factories in the server. The order is
 * the order of the API's enums (append a new provider at the end).
 */
import type { z } from 'zod';
import { PlatformError, type ValidationIssue } from '../errors.js';
import { AnthropicOptions, ApiKeyFields, AzureFields, AzureOptions, BedrockFields, BedrockOptions, GoogleOptions, NoOptions, OpenAIOptions } from './provider-schemas.js';

export interface ModelProviderEntry {
  /**
   * Whether callers keep credentials of it (`POST /api/v1/credentials`, the caller's default
   * credential of the provider, its model list). False: its calls take no account (`local`).
   */
  readonly credential: boolean;
  /**
   * Where its calls go when no credential names a `baseUrl` (or there is no credential): the
   * operator's environment variable, else `url`. Projects show it in `resolved.baseUrl`.
   * Absent: no address (nothing is called).
   */
  readonly defaultBaseUrl?: { readonly env: string; readonly url: string };
  /**
   * The fields of its credentials (beyond `name`, `baseUrl`, `proxy`, `default`): a strict zod
   * object, e.g. `{ apiKey }`, Bedrock's `{ region, accessKeyId, secretAccessKey, sessionToken? }`.
   * The API's credential schemas (one variant per provider) follow. Absent when `credential` is false.
   */
  readonly fields?: z.ZodObject;
  /** The fields that are secrets: sealed at rest, never returned (their last four characters are). The first is the one `apiKeyLast4` shows. */
  readonly secrets?: readonly string[];
  /** The fields that are addresses (besides `baseUrl`): checked against the outbound policy when saved, shown masked. */
  readonly urls?: readonly string[];
  /**
   * The operator's environment variables of credential fields (the first set one of each), read
   * only for a call without a credential of the caller: its address is then the provider's
   * default, never one a caller chose. Absent: without a credential, calls have no key.
   */
  readonly env?: Readonly<Record<string, readonly string[]>>;
  /** Its `providerOptions` (a project's, a request's `provider_options`): a strict zod object. */
  readonly options: z.ZodObject;
}

export const MODEL_PROVIDERS = {
  /** Any OpenAI-compatible server. */
  openai: {
    credential: true,
    defaultBaseUrl: { env: 'OPENAI_BASE_URL', url: 'https://api.openai.com/v1' },
    fields: ApiKeyFields,
    secrets: ['apiKey'],
    env: { apiKey: ['OPENAI_API_KEY'] },
    options: OpenAIOptions,
  },
  /** An Ollama runtime (its OpenAI-compatible `/v1`). */
  ollama: { credential: true, defaultBaseUrl: { env: 'OLLAMA_HOST', url: 'http://127.0.0.1:11434' }, fields: ApiKeyFields, secrets: ['apiKey'], options: NoOptions },
  /** A model run by the platform itself: none is bundled in this version. */
  local: { credential: false, options: NoOptions },
  /** Anthropic's Messages API (Claude). */
  anthropic: {
    credential: true,
    defaultBaseUrl: { env: 'ANTHROPIC_BASE_URL', url: 'https://api.anthropic.com/v1' },
    fields: ApiKeyFields,
    secrets: ['apiKey'],
    env: { apiKey: ['ANTHROPIC_API_KEY'] },
    options: AnthropicOptions,
  },
  /** An Azure OpenAI resource: its deployments' chat completions. No default address: the resource's endpoint is a field. */
  azure: {
    credential: true,
    fields: AzureFields,
    secrets: ['apiKey'],
    urls: ['endpoint'],
    env: { apiKey: ['AZURE_OPENAI_API_KEY'], endpoint: ['AZURE_OPENAI_ENDPOINT'], apiVersion: ['AZURE_OPENAI_API_VERSION'] },
    options: AzureOptions,
  },
  /** Amazon Bedrock's Converse API, signed with SigV4. No default address (the region's runtime endpoint) and no operator environment: a call needs a credential. */
  bedrock: { credential: true, fields: BedrockFields, secrets: ['secretAccessKey', 'sessionToken'], options: BedrockOptions },
  /** Google's Gemini API. */
  google: {
    credential: true,
    defaultBaseUrl: { env: 'GOOGLE_GENERATIVE_AI_BASE_URL', url: 'https://generativelanguage.googleapis.com/v1beta' },
    fields: ApiKeyFields,
    secrets: ['apiKey'],
    env: { apiKey: ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY'] },
    options: GoogleOptions,
  },
} as const satisfies Record<string, ModelProviderEntry>;

/** A model provider's name, e.g. `openai`. */
export type ModelProviderId = keyof typeof MODEL_PROVIDERS;

/** The providers callers keep credentials of (`credential: true`). */
export type CredentialProviderId = { [K in ModelProviderId]: (typeof MODEL_PROVIDERS)[K]['credential'] extends true ? K : never }[ModelProviderId];

/** Every provider's name, in the table's order. */
export const MODEL_PROVIDER_IDS = Object.keys(MODEL_PROVIDERS) as ModelProviderId[];

/** The providers callers keep credentials of, in the table's order. */
export const CREDENTIAL_PROVIDER_IDS = MODEL_PROVIDER_IDS.filter((id) => MODEL_PROVIDERS[id].credential) as CredentialProviderId[];

/** Whether `name` is a provider of the table (own names only: `constructor` is none). */
export const isModelProvider = (name: string): name is ModelProviderId => Object.hasOwn(MODEL_PROVIDERS, name);

/**
 * The problems of `options` as `provider`'s `providerOptions` (its entry's `options` schema),
 * each with its path under `path` (`providerOptions.thinking.budgetTokens`); empty when they fit.
 */
export function providerOptionsIssues(provider: string, options: unknown, path: readonly (string | number)[]): ValidationIssue[] {
  if (!isModelProvider(provider)) return [];
  const schema: z.ZodObject = MODEL_PROVIDERS[provider].options;
  const parsed = schema.safeParse(options);
  if (parsed.success) return [];
  const known = Object.keys(schema.shape);
  return parsed.error.issues.map((issue) =>
    issue.code === 'unrecognized_keys'
      ? {
          path: [...path, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
          code: issue.code,
          message: `${issue.keys.map((k) => `"${k}"`).join(', ')} ${issue.keys.length === 1 ? 'is not an option' : 'are not options'} of provider ${provider}${known.length > 0 ? ` (it takes ${known.join(', ')})` : ' (it takes none)'}`,
        }
      : { path: [...path, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], code: issue.code, message: issue.message },
  );
}

/** Refuses `options` that are not `provider`'s `providerOptions`: 400 naming each key (`providerOptions.thinking: ...`). */
export function checkProviderOptions(provider: string, options: unknown, path: readonly (string | number)[]): void {
  const issues = providerOptionsIssues(provider, options, path);
  if (issues.length > 0) throw PlatformError.invalid(issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), issues);
}
