import type { ChatModelResolver } from '../agent/chat-model.js';
import type { ToolSource } from '../agent/tools.js';
import type { ByteLimit } from '../net/upstream-limits.js';
import type { ImageLimits } from './images.js';

export interface AgentOptions {
  readonly models: ChatModelResolver;
  /** `provider:model` used when a request names no model. Default `openai:gpt-4o-mini`. */
  readonly defaultModel?: string;
  /** Model calls per turn at most. Default 8. */
  readonly stepLimit?: number;
  /**
   * Most bytes of one message a turn stores in a chat (the model's text and tool calls of one
   * step, one tool's result), and the setting that raises it, named in the error. Default 1 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.messageBytes`).
   */
  readonly messageLimit?: ByteLimit;
  /** Where agents' tools come from (project tools, MCP servers). */
  readonly toolSources?: readonly ToolSource[];
  /**
   * Where a provider's calls go when the credential names no `baseUrl` (or there is none): the
   * server's environment (OPENAI_BASE_URL, OLLAMA_HOST). Only shown, in a project's `resolved`.
   */
  readonly defaultBaseUrl?: (provider: string) => string | undefined;
  /**
   * Knowledge hits scoring below this are neither given to the model nor returned as sources,
   * for projects whose settings set no `minScore`. Default `AGENT_MIN_SCORE` (0.27).
   */
  readonly minScore?: number;
  /**
   * Token budget of a model call's messages with a chat (o200k_base tokens, as chunking counts):
   * the system context (instructions and knowledge excerpts) and the request's own messages are
   * always sent; the chat's earlier turns fill what is left, newest first, whole (oldest turns
   * first out; a tool call is never sent without its results). Default `DEFAULT_HISTORY_TOKENS`.
   */
  readonly historyTokens?: number;
  /**
   * Limits of provider calls that use no credential of the caller's, by provider: they go out on
   * the operator's own account (the server's OPENAI_API_KEY for `openai`). Default: none.
   */
  readonly operatorKey?: Readonly<Record<string, OperatorKeyLimits>>;
  /**
   * Limits of the images of user messages (`image_url` parts): bytes of one image and of one
   * request's images, and the time to fetch one. Default `DEFAULT_IMAGE_LIMITS` (5 MiB, 20 MiB, 10 s).
   */
  readonly images?: ImageLimits;
}

/** What calls on the operator's own key may ask (`AgentOptions.operatorKey`). */
export interface OperatorKeyLimits {
  /** Most `max_tokens` a request may ask (more is refused); sent as its `max_tokens` when it asks none. */
  readonly maxTokens?: number;
  /** The only model names allowed; absent or empty: any. */
  readonly models?: readonly string[];
  /** How the operator sets each, named in the refusals (e.g. the server's flags). Default `agent.operatorKey.<provider>.<member>`. */
  readonly hints?: { readonly maxTokens?: string; readonly models?: string };
}
