/**
 * One adapter from the AI SDK's language models (`LanguageModelV3`) to our `ChatModel`, and what
 * a provider built on it needs: the bounded fetch, the description of its server, a JSON GET
 * failing as the AI SDK's calls do. A provider is a folder that calls these (see `../anthropic`).
 */
export { type AiSdkChatModelOptions, aiSdkChatModel } from './chat-model.js';
export type { FailureReading, UpstreamFailure, UpstreamKind } from './errors.js';
export { DEFAULT_ANSWER_LIMIT, describeUpstream, getJson, modelFetch } from './fetch.js';
