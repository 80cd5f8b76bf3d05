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
  /**
   * The provider's opaque data of the call, as the adapter read it and wants it back with the
   * call (for the AI SDK's providers, its `providerMetadata`: Gemini's `{ google: {
   * thoughtSignature } }`, which Gemini 3 requires on the calls of the current turn). Kept within
   * the turn and stored with the chat's message; sent back only to the provider that gave it,
   * never shown to API clients. Absent where the provider has none or does not need it.
   */
  readonly metadata?: Record<string, unknown>;
}

/**
 * A piece of a user message: text, or an image (already fetched and checked by the caller;
 * adapters only encode it). Sent only to a model whose `capabilities.images` is true.
 */
export type ChatContentPart =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image';
      /** e.g. `image/png`, `image/jpeg`, `image/webp`, `image/gif`. */
      readonly mediaType: string;
      /** The image's bytes, base64 (no `data:` prefix). */
      readonly data: string;
    };

/**
 * A block of an answer's reasoning as the provider gave it, sent back with the assistant message:
 * Anthropic's extended thinking requires the signed thinking block of a step that called tools in
 * the next request, with the tool results (Claude's on Bedrock likewise), also when the tools are
 * the client's and the turn goes on in a later request of the chat. Adapters that have no use for
 * it leave it out of their requests.
 */
export interface ReasoningBlock {
  /** The reasoning text (empty for a redacted block). */
  readonly text: string;
  /**
   * The provider's opaque data of the block, as the adapter read it and wants it back (for the AI
   * SDK's providers, its `providerMetadata`, e.g. `{ anthropic: { signature } }` or `{ anthropic:
   * { redactedData } }`). Never shown to API clients; stored with the chat's message and sent
   * back only to the provider that gave it.
   */
  readonly metadata?: Record<string, unknown>;
}

export type ChatMessage =
  | { readonly role: 'system'; readonly content: string; readonly name?: string }
  | { readonly role: 'user'; readonly content: string | readonly ChatContentPart[]; readonly name?: string }
  | {
      readonly role: 'assistant';
      readonly content: string | null;
      readonly toolCalls?: readonly ToolCall[];
      readonly name?: string;
      /** The reasoning of this answer, in order, as the model's `finish` event gave it (sent back within a turn). */
      readonly reasoning?: readonly ReasoningBlock[];
    }
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
  /** User messages may hold `image` parts (`ChatContentPart`). Default false. */
  readonly images?: boolean;
  /**
   * `ChatRequest.responseFormat` is honoured: natively, or by the provider's documented
   * equivalent (e.g. a forced tool) inside the adapter. Default false.
   */
  readonly structuredOutputs?: boolean;
  /** The model may stream its reasoning as `reasoning` events (when asked through `providerOptions`). Default false. */
  readonly reasoning?: boolean;
}

/**
 * The shape the answer's text must have: `json_object` any JSON object; `json_schema` a JSON
 * value that follows `schema` (`strict`: exactly, where the provider can enforce it).
 */
export type ResponseFormat =
  | { readonly type: 'json_object' }
  | {
      readonly type: 'json_schema';
      readonly name: string;
      readonly description?: string;
      readonly schema: Record<string, unknown>;
      readonly strict?: boolean;
    };

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
  /** Only where `capabilities.structuredOutputs`. Default: free text. */
  readonly responseFormat?: ResponseFormat;
  /**
   * The provider's own options, with no equivalent here (Anthropic's `thinking` and
   * `cacheControl`, Gemini's `safetySettings` and `thinkingConfig`, Bedrock's
   * `guardrailConfig`), in the names of the provider's adapter; others ignore them.
   */
  readonly providerOptions?: Record<string, unknown>;
  readonly signal?: AbortSignal;
}

/**
 * Why the answer ended: `stop` (done, or a stop sequence), `length` (`maxTokens` or the model's
 * limit), `tool_calls` (it asks for tools), `content_filter` (the provider's safety system cut
 * or refused the answer).
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface Usage {
  /** Every token of the prompt, cached ones included. */
  readonly promptTokens: number;
  /** Every token of the answer, reasoning included. */
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** Of `promptTokens`, those read from the provider's prompt cache. */
  readonly cachedPromptTokens?: number;
  /** Of `promptTokens`, those written to the provider's prompt cache. */
  readonly cacheWritePromptTokens?: number;
  /** Of `completionTokens`, those the model spent reasoning. */
  readonly reasoningTokens?: number;
}

/** What a streaming call yields, in order: text (and reasoning) deltas and tool calls, then one `finish`. */
export type ChatEvent =
  | { readonly type: 'text'; readonly delta: string }
  /** Reasoning text the provider streams (never part of `text`). */
  | { readonly type: 'reasoning'; readonly delta: string }
  /** A complete tool call (implementations assemble the streamed fragments). */
  | { readonly type: 'tool_call'; readonly call: ToolCall }
  | {
      readonly type: 'finish';
      readonly reason: FinishReason;
      readonly usage?: Usage;
      /**
       * The answer's reasoning blocks, whole and in order, with the provider's data, for the
       * assistant message that is sent back (`ChatMessage.reasoning`). Only where the provider
       * needs them back (Anthropic's extended thinking); the text already came as `reasoning` events.
       */
      readonly reasoning?: readonly ReasoningBlock[];
    };

export interface ChatResult {
  readonly content: string;
  /** The reasoning text, when the model streamed any. */
  readonly reasoning?: string;
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
  /** The credential's key (the same as `fields.apiKey` when `fields` is given). */
  readonly apiKey?: string;
  readonly baseUrl?: string;
  readonly proxy?: boolean;
  /**
   * The credential's fields, unsealed, as the provider's registry entry declares them (`apiKey`,
   * Bedrock's `region`/`accessKeyId`/`secretAccessKey`/`sessionToken`, Azure's `endpoint`/`apiVersion`/`deployments`).
   * Absent without a credential: the server then reads the operator's environment (the entry's `env`).
   */
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** A caller's credential as a provider call uses it: unsealed. */
export interface ProviderCredential {
  /** The credential's id and name, for messages (a refused key names its credential). */
  readonly id?: string;
  readonly name?: string;
  /** Its API key, when its provider has one (`fields.apiKey`). */
  readonly apiKey?: string;
  /** Every field of its provider (`apiKey`, Bedrock's keys and region, Azure's endpoint, ...). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Where its calls go; null: the provider's default (the server's environment). */
  readonly baseUrl: string | null;
  readonly proxy: boolean;
}

/** The config of a call of `provider` with the caller's credential, or without one (the server then reads the operator's environment). */
export function providerConfig(provider: string, credential: ProviderCredential | undefined): ProviderConfig {
  if (!credential) return { provider };
  const { apiKey, fields, baseUrl, proxy } = credential;
  return { provider, ...(apiKey !== undefined ? { apiKey } : {}), fields, proxy, ...(baseUrl ? { baseUrl } : {}) };
}

/** Makes the chat model of a provider (the server applies environment fallbacks and the URL policy). */
export type ChatModelResolver = (config: ProviderConfig) => ChatModel;

/** Collects a stream into one result (for non-streaming answers). */
export async function collectChat(events: AsyncIterable<ChatEvent>): Promise<ChatResult> {
  let content = '';
  let reasoning: string | undefined;
  const toolCalls: ToolCall[] = [];
  let finishReason: FinishReason = 'stop';
  let usage: Usage | undefined;
  for await (const event of events) {
    if (event.type === 'text') content += event.delta;
    else if (event.type === 'reasoning') reasoning = (reasoning ?? '') + event.delta;
    else if (event.type === 'tool_call') toolCalls.push(event.call);
    else {
      finishReason = event.reason;
      usage = event.usage;
    }
  }
  return { content, ...(reasoning !== undefined ? { reasoning } : {}), toolCalls, finishReason, ...(usage ? { usage } : {}) };
}

/** The text of a message's content: the content itself, or its text parts joined (images left out). */
export function messageText(content: string | readonly ChatContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
