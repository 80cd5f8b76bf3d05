/**
 * The chat model plug-in interface: one provider call (no agent logic). Implementations: the
 * `openai` provider (any OpenAI-compatible server) and `ollama`, in
 * `@agent-platform/adapters-models`. Conformance suite: `describeChatModel` in
 * `@agent-platform/core/testing`.
 */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  /** Id given by the model; the tool's result message refers to it. */
  readonly id: string;
  readonly name: string;
  /** The arguments as the model wrote them: a JSON text (may be malformed). */
  readonly arguments: string;
}

export type ChatMessage =
  | { readonly role: 'system'; readonly content: string; readonly name?: string }
  | { readonly role: 'user'; readonly content: string; readonly name?: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly toolCalls?: readonly ToolCall[]; readonly name?: string }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly content: string };

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Record<string, unknown>;
  /**
   * Ask the model to follow `parameters` exactly (OpenAI's structured outputs). Sent only where
   * the model's `capabilities.strictTools` is true. Default: not asked.
   */
  readonly strict?: boolean;
}

/**
 * Which tools the model may or must call (OpenAI's `tool_choice`): `auto` (default) lets it
 * choose; `required` makes it call one or more of the offered tools; `{ name }` makes it call
 * that one. ("Call none" is asked by offering no tools.)
 */
export type ToolChoice = 'auto' | 'required' | { readonly name: string };

/** What a chat model honours beyond text and tools. A model that leaves one out does not. */
export interface ChatModelCapabilities {
  /** `ChatRequest.toolChoice` (`required` or a named tool) is honoured. Default false. */
  readonly toolChoice?: boolean;
  /** `ChatRequest.parallelToolCalls: false` is honoured. Default false. */
  readonly parallelToolCalls?: boolean;
  /** `ToolDefinition.strict` is honoured. Default false. */
  readonly strictTools?: boolean;
}

export interface ChatRequest {
  /** The provider's model name, e.g. `gpt-4o-mini` or `llama3.2:3b`. */
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolDefinition[];
  /** 0..2 */
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** 0..1, nucleus sampling. Default: the provider's. */
  readonly topP?: number;
  /** -2..2. Default: the provider's. */
  readonly frequencyPenalty?: number;
  /** -2..2. Default: the provider's. */
  readonly presencePenalty?: number;
  /** Asks for repeatable sampling (best effort, as providers define it). */
  readonly seed?: number;
  /** Up to 4 sequences where the model stops (not included in the text). */
  readonly stop?: readonly string[];
  /** Only with `tools`, and only where `capabilities.toolChoice`. Default `auto`. */
  readonly toolChoice?: ToolChoice;
  /** `false`: at most one tool call per answer. Only with `tools`, and only where `capabilities.parallelToolCalls`. */
  readonly parallelToolCalls?: boolean;
  readonly signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
}

/** What a streaming call yields, in order: text deltas and tool-call pieces, then one `finish`. */
export type ChatEvent =
  | { readonly type: 'text'; readonly delta: string }
  /** A complete tool call (implementations assemble the streamed fragments). */
  | { readonly type: 'tool_call'; readonly call: ToolCall }
  | { readonly type: 'finish'; readonly reason: FinishReason; readonly usage?: Usage };

export interface ChatResult {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  readonly usage?: Usage;
}

export interface ChatModel {
  /** The provider, e.g. `openai`. */
  readonly provider: string;
  /** What it honours beyond text and tools; absent: none of it. */
  readonly capabilities?: ChatModelCapabilities;
  /**
   * Streams one model call. Upstream failures throw `PlatformError` with `upstream_error`
   * (or `timeout`), before or during the stream; aborting the signal stops the upstream call.
   */
  stream(request: ChatRequest): AsyncIterable<ChatEvent>;
  /**
   * The model names the provider offers, from one cheap read of its models route (OpenAI:
   * `GET {baseURL}/models`; Ollama: `GET {host}/api/tags`), with the key and address of this
   * model. Fails as `stream` does: `upstream_error` with `details.status` for an HTTP error
   * (401 for a wrong key), `unavailable` when nothing answers, the outbound policy's refusal as
   * it is, `aborted` when the signal is. Optional: a provider without a models route has none.
   */
  listModels?(options?: { readonly signal?: AbortSignal }): Promise<string[]>;
}

/** What a provider call needs: the provider and, when the caller has one, their credential. */
export interface ProviderConfig {
  readonly provider: string;
  readonly apiKey?: string;
  readonly baseUrl?: string;
  readonly proxy?: boolean;
}

/** Makes the chat model of a provider (the server applies environment fallbacks and the URL policy). */
export type ChatModelResolver = (config: ProviderConfig) => ChatModel;

/** Collects a stream into one result (for non-streaming answers). */
export async function collectChat(events: AsyncIterable<ChatEvent>): Promise<ChatResult> {
  let content = '';
  const toolCalls: ToolCall[] = [];
  let finishReason: FinishReason = 'stop';
  let usage: Usage | undefined;
  for await (const event of events) {
    if (event.type === 'text') content += event.delta;
    else if (event.type === 'tool_call') toolCalls.push(event.call);
    else {
      finishReason = event.reason;
      usage = event.usage;
    }
  }
  return usage ? { content, toolCalls, finishReason, usage } : { content, toolCalls, finishReason };
}
