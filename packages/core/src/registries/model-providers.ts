/**
 * The model providers a project, a completion or a credential can name (DESIGN.md, "Model
 * providers"), declared once: the schemas' enums (`Provider`, `CredentialProvider`, the
 * completion's `provider`), `provider:model` names and the server's chat model factories
 * (`satisfies Record<ModelProviderId, …>`) all come from this table. Entries are data: the
 * adapters live in `@agent-platform/adapters-models`, the factories in the server. The order is
 * the order of the API's enums (append a new provider at the end).
 */
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
  /** The operator's environment variable of the API key its calls use when the caller has no credential. Absent: none. */
  readonly apiKeyEnv?: string;
}

export const MODEL_PROVIDERS = {
  /** Any OpenAI-compatible server. */
  openai: { credential: true, defaultBaseUrl: { env: 'OPENAI_BASE_URL', url: 'https://api.openai.com/v1' }, apiKeyEnv: 'OPENAI_API_KEY' },
  /** An Ollama runtime (its OpenAI-compatible `/v1`). */
  ollama: { credential: true, defaultBaseUrl: { env: 'OLLAMA_HOST', url: 'http://127.0.0.1:11434' } },
  /** A model run by the platform itself: none is bundled in this version. */
  local: { credential: false },
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
