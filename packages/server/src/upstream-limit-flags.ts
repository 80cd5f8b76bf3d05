import { type ByteLimit, DEFAULT_UPSTREAM_LIMITS, type UpstreamLimits } from '@agent-platform/core';
import { resolveUpstreamLimits, type UpstreamLimitName } from '@agent-platform/core/internal';
import { type IntegerFlag, integerFlagsFrom } from './integer-flags.js';

const flag = (name: string, env: string, key: UpstreamLimitName, min = 1024): IntegerFlag<UpstreamLimitName> => ({
  flag: name,
  env,
  key,
  min,
  max: 1024 ** 3,
  defaultValue: DEFAULT_UPSTREAM_LIMITS[key],
});

/**
 * The flags and env variables of the bounds on what upstreams send back (documented in
 * README.md, docs/SECURITY.md and `serve --help`): what each bounds is `UpstreamLimits`.
 */
export const UPSTREAM_LIMIT_FLAGS: readonly IntegerFlag<UpstreamLimitName>[] = [
  flag('max-model-answer', 'AGENT_PLATFORM_MAX_MODEL_ANSWER', 'modelAnswerBytes'),
  flag('max-message', 'AGENT_PLATFORM_MAX_MESSAGE', 'messageBytes'),
  flag('max-mcp-message', 'AGENT_PLATFORM_MAX_MCP_MESSAGE', 'mcpMessageBytes'),
  flag('max-mcp-tool-result', 'AGENT_PLATFORM_MAX_MCP_TOOL_RESULT', 'mcpToolResultBytes', 1),
  flag('max-runtime-answer', 'AGENT_PLATFORM_MAX_RUNTIME_ANSWER', 'runtimeAnswerBytes'),
  flag('max-vector-answer', 'AGENT_PLATFORM_MAX_VECTOR_ANSWER', 'vectorAnswerBytes'),
  flag('max-embeddings-answer', 'AGENT_PLATFORM_MAX_EMBEDDINGS_ANSWER', 'embeddingsAnswerBytes'),
];

/** The limits given as flags (`values`, by flag name) or else env variables; an `Error` naming the flag for a value out of range. */
export function upstreamLimitsFrom(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): UpstreamLimits {
  return integerFlagsFrom(UPSTREAM_LIMIT_FLAGS, values, env);
}

/** Every limit of a server, each with the flag that raises it (named in the error of an answer past it). */
export type ServerUpstreamLimits = Readonly<Record<UpstreamLimitName, ByteLimit>>;

/** `limits` with the defaults filled in, each as a `ByteLimit` naming its flag. */
export function serverUpstreamLimits(limits: UpstreamLimits = {}): ServerUpstreamLimits {
  const resolved = resolveUpstreamLimits(limits);
  return Object.fromEntries(UPSTREAM_LIMIT_FLAGS.map((f) => [f.key, { bytes: resolved[f.key], setting: `--${f.flag}` }])) as unknown as ServerUpstreamLimits;
}
