import type { AgentOptions, ToolSource } from '@agent-platform/core';
import type { outboundFetches } from './outbound.js';
import { chatModelResolver, providerBaseUrl } from './providers/index.js';
import type { serverUpstreamLimits } from './upstream-limit-flags.js';
import { agentLimitsFrom, type EnvKeyLimits, type ImageSizes, operatorKeyLimits, serverImageLimits } from './user-limits.js';

/** What the server's options say of the agent (each falls back to its env variable, then its default). */
export interface AgentSettings {
  readonly defaultModel?: string | undefined;
  readonly maxSteps?: number | undefined;
  readonly toolSources?: readonly ToolSource[] | undefined;
  readonly historyTokens?: number | undefined;
  readonly envKey?: EnvKeyLimits | undefined;
  readonly images?: ImageSizes | undefined;
}

/**
 * The agent of a serving platform: chat models of every provider through the guarded fetches,
 * the limits of upstream answers, the history budget, the operator key's limits and the images'
 * sizes, each naming its flag.
 */
export function serverAgentOptions(env: NodeJS.ProcessEnv, fetches: ReturnType<typeof outboundFetches>, limits: ReturnType<typeof serverUpstreamLimits>, options: AgentSettings): AgentOptions {
  const agentLimits = agentLimitsFrom({}, env);
  const historyTokens = options.historyTokens ?? agentLimits.historyTokens;
  return {
    models: chatModelResolver(env, fetches, limits.modelAnswerBytes),
    messageLimit: limits.messageBytes,
    defaultBaseUrl: (provider: string) => providerBaseUrl(env, provider),
    defaultModel: options.defaultModel ?? env.AGENT_PLATFORM_DEFAULT_MODEL ?? 'openai:gpt-4o-mini',
    ...(options.maxSteps ? { stepLimit: options.maxSteps } : {}),
    ...(options.toolSources ? { toolSources: options.toolSources } : {}),
    ...(historyTokens !== undefined ? { historyTokens } : {}),
    operatorKey: operatorKeyLimits({ ...agentLimits.envKey, ...options.envKey }),
    images: serverImageLimits(options.images, env),
  };
}
