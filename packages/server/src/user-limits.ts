import { DEFAULT_IMAGE_LIMITS, DEFAULT_USER_CAPS, type ImageLimits, type OperatorKeyLimits, type UserCapName, type UserCaps } from '@agent-platform/core';
import { DEFAULT_HISTORY_TOKENS } from '@agent-platform/core/internal';
import { type IntegerFlag, integerFlagsFrom } from './integer-flags.js';

/** Each per-user cap as `agent-platform serve` takes it (documented in README.md and `serve --help`). */
export const USER_CAP_FLAGS: readonly IntegerFlag<UserCapName>[] = (
  [
    ['keys', 'max-keys-per-user', 'AGENT_PLATFORM_MAX_KEYS_PER_USER'],
    ['projects', 'max-projects-per-user', 'AGENT_PLATFORM_MAX_PROJECTS_PER_USER'],
    ['credentials', 'max-credentials-per-user', 'AGENT_PLATFORM_MAX_CREDENTIALS_PER_USER'],
    ['chats', 'max-chats-per-user', 'AGENT_PLATFORM_MAX_CHATS_PER_USER'],
    ['tools', 'max-tools-per-user', 'AGENT_PLATFORM_MAX_TOOLS_PER_USER'],
    ['mcpServers', 'max-mcp-servers-per-user', 'AGENT_PLATFORM_MAX_MCP_SERVERS_PER_USER'],
    ['documents', 'max-documents-per-user', 'AGENT_PLATFORM_MAX_DOCUMENTS_PER_USER'],
    ['messages', 'max-messages-per-user', 'AGENT_PLATFORM_MAX_MESSAGES_PER_USER'],
  ] as const
).map(([key, flag, env]) => ({ flag, env, key, min: 1, max: 1_000_000_000, defaultValue: DEFAULT_USER_CAPS[key] }));

/** How the error of a user over a cap tells the operator to raise it: the flag. */
export const USER_CAP_HINTS: Readonly<Record<UserCapName, string>> = Object.fromEntries(USER_CAP_FLAGS.map((f) => [f.key, `--${f.flag}`])) as Record<UserCapName, string>;

/** The caps given as flags (`values`, by flag name) or else env variables; an `Error` naming the flag for a value out of range. */
export function userCapsFrom(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): Partial<UserCaps> {
  return integerFlagsFrom(USER_CAP_FLAGS, values, env);
}

/** What calls of provider `openai` on the server's own key (OPENAI_API_KEY: no credential of the user's) may ask. */
export interface EnvKeyLimits {
  /** Most `max_tokens` a request may ask, sent when it asks none; 0 for no cap. Default 4096. */
  readonly maxTokens?: number;
  /** The only model names allowed; empty or absent: any. */
  readonly models?: readonly string[];
}

/** Default of `--env-key-max-tokens`. */
export const DEFAULT_ENV_KEY_MAX_TOKENS = 4096;

/** The agent's integer settings of `serve`: the history budget, the cap of `max_tokens` on the server's key, the images' sizes. */
export const AGENT_LIMIT_FLAGS: readonly IntegerFlag<'historyTokens' | 'envKeyMaxTokens' | 'maxImageBytes' | 'maxRequestBytes'>[] = [
  { flag: 'history-tokens', env: 'AGENT_PLATFORM_HISTORY_TOKENS', key: 'historyTokens', min: 0, max: 100_000_000, defaultValue: DEFAULT_HISTORY_TOKENS },
  { flag: 'env-key-max-tokens', env: 'AGENT_PLATFORM_ENV_KEY_MAX_TOKENS', key: 'envKeyMaxTokens', min: 0, max: 100_000_000, defaultValue: DEFAULT_ENV_KEY_MAX_TOKENS },
  { flag: 'max-image-bytes', env: 'AGENT_PLATFORM_MAX_IMAGE_BYTES', key: 'maxImageBytes', min: 1, max: 64 * 1024 * 1024, defaultValue: DEFAULT_IMAGE_LIMITS.maxImageBytes },
  { flag: 'max-request-image-bytes', env: 'AGENT_PLATFORM_MAX_REQUEST_IMAGE_BYTES', key: 'maxRequestBytes', min: 1, max: 64 * 1024 * 1024, defaultValue: DEFAULT_IMAGE_LIMITS.maxRequestBytes },
];

/** How much of the images of completions the server takes (`--max-image-bytes`, `--max-request-image-bytes`). */
export type ImageSizes = Pick<ImageLimits, 'maxImageBytes' | 'maxRequestBytes'>;

/** The image limits of the agent: the given ones over the environment's, over the defaults; the flags named in the 413s. */
export function serverImageLimits(given: ImageSizes | undefined, env: NodeJS.ProcessEnv): Required<ImageSizes> & ImageLimits {
  return {
    ...DEFAULT_IMAGE_LIMITS,
    ...agentLimitsFrom({}, env).images,
    ...given,
    hints: { maxImageBytes: '--max-image-bytes', maxRequestBytes: '--max-request-image-bytes' },
  };
}

/** The completion routes' body limit: the JSON limit plus the request's images as base64 `data:` URLs. */
export const completionBodyLimit = (bodyLimit: number, images: Required<ImageSizes>): number => bodyLimit + Math.ceil(images.maxRequestBytes / 3) * 4;

/** The history budget, the server key's cap and the image sizes given as flags or else env variables. */
export function agentLimitsFrom(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): { historyTokens?: number; envKey: EnvKeyLimits; images: ImageSizes } {
  const { historyTokens, envKeyMaxTokens, maxImageBytes, maxRequestBytes } = integerFlagsFrom(AGENT_LIMIT_FLAGS, values, env);
  const listed = values['env-key-model'];
  const models = Array.isArray(listed)
    ? listed.map(String)
    : (env.AGENT_PLATFORM_ENV_KEY_MODELS?.split(',')
        .map((m) => m.trim())
        .filter(Boolean) ?? []);
  return {
    ...(historyTokens !== undefined ? { historyTokens } : {}),
    envKey: { ...(envKeyMaxTokens !== undefined ? { maxTokens: envKeyMaxTokens } : {}), ...(models.length > 0 ? { models } : {}) },
    images: { ...(maxImageBytes !== undefined ? { maxImageBytes } : {}), ...(maxRequestBytes !== undefined ? { maxRequestBytes } : {}) },
  };
}

/** The agent's limits of `openai` calls on the server's key, the flags named in its refusals. */
export function operatorKeyLimits(limits: EnvKeyLimits): Record<string, OperatorKeyLimits> {
  const maxTokens = limits.maxTokens ?? DEFAULT_ENV_KEY_MAX_TOKENS;
  return {
    openai: {
      ...(maxTokens > 0 ? { maxTokens } : {}),
      ...(limits.models?.length ? { models: limits.models } : {}),
      hints: { maxTokens: '--env-key-max-tokens', models: '--env-key-model' },
    },
  };
}
