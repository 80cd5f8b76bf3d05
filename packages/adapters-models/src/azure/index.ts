import { type ByteLimit, type ChatModel, type ChatModelCapabilities, PlatformError } from '@agent-platform/core';
import { createAzure } from '@ai-sdk/azure';
import { aiSdkChatModel, DEFAULT_ANSWER_LIMIT, describeUpstream, getJson, modelFetch } from '../ai-sdk/index.js';
import { listData, member, openaiFamilyOptions } from '../openai-family.js';

export interface AzureChatModelOptions {
  /**
   * The resource's endpoint, `https://{resource}.openai.azure.com` (with or without a trailing
   * `/` or `/openai`). Required unless `baseURL` is given.
   */
  readonly endpoint?: string;
  /** Sent as the `api-key` header. Environment variables (`AZURE_API_KEY`) are never read. */
  readonly apiKey: string;
  /** The data plane's `api-version` query parameter. Default `2024-10-21` (the latest GA version). */
  readonly apiVersion?: string;
  /**
   * Model name (`ChatRequest.model`) → deployment name. A model not listed is used as its own
   * deployment name (the common practice of naming a deployment after its model).
   */
  readonly deployments?: Readonly<Record<string, string>>;
  /**
   * Where `/deployments/...` and `/models` are, instead of `{endpoint}/openai`: a gateway's or
   * proxy's prefix (API Management, LiteLLM, a private endpoint's name), or a test's fake.
   */
  readonly baseURL?: string;
  /** Every request goes through it (e.g. the server's guarded fetch); default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Milliseconds to wait for the answer (per attempt) and then for each next chunk. Default 120000. */
  readonly timeoutMs?: number;
  /** Retries of a call that failed before its first chunk (408, 409, 429 after its `retry-after`, 5xx, connection errors). Default 2. */
  readonly maxRetries?: number;
  /** Most bytes of one answer (a body, one chunk, the streamed text and tool calls). Default 4 MiB. */
  readonly answerLimit?: ByteLimit;
}

/** The GA data-plane version whose deployment routes this adapter calls. */
export const AZURE_API_VERSION = '2024-10-21';

/** Azure OpenAI's chat completions honour OpenAI's tool settings, images (vision deployments) and structured outputs. */
const CAPABILITIES: ChatModelCapabilities = { toolChoice: true, parallelToolCalls: true, strictTools: true, images: true, structuredOutputs: true };

/** `{endpoint}/openai` or the `baseURL` given, without a trailing `/`. */
function azureBaseURL(options: AzureChatModelOptions): string {
  if (options.baseURL) return options.baseURL.replace(/\/+$/, '');
  const endpoint = options.endpoint
    ?.trim()
    .replace(/\/+$/, '')
    .replace(/\/openai$/i, '');
  if (!endpoint) throw PlatformError.invalid('azureChatModel: endpoint (https://{resource}.openai.azure.com) or baseURL is required');
  return `${endpoint}/openai`;
}

/**
 * A chat model of an Azure OpenAI resource: chat completions of a deployment,
 * `POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version={apiVersion}`
 * with the key in `api-key`, streamed, on the AI SDK's `@ai-sdk/azure` (its chat model with
 * deployment-based URLs, the form the GA API versions document), every request through `fetch`.
 * Azure's errors are read the common way: 401 `auth`, 429 `rate_limited` with its
 * `retry-after-ms`/`retry-after`, `context_length_exceeded`, `DeploymentNotFound` as
 * `model_not_found`, a prompt its content filter refused (`code: content_filter`) as
 * `content_filter`; an answer the filter cut ends with the finish reason `content_filter`.
 * `ChatRequest.providerOptions` are the AI SDK's OpenAI chat options (`reasoningEffort`,
 * `maxCompletionTokens`, `user`, ...).
 *
 * `listModels` answers the model names of `deployments` (what this resource serves under the
 * names requests use), after `GET {endpoint}/openai/models`, which checks the key, the endpoint
 * and the API version; with no `deployments` given, the chat models that route lists (the
 * resource's base and fine-tuned models: a call works where a deployment bears that name).
 *
 * @example
 * const azure = azureChatModel({ endpoint: 'https://contoso.openai.azure.com', apiKey, deployments: { 'gpt-4o': 'contoso-gpt4o' } });
 * const { content } = await collectChat(azure.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }));
 */
export function azureChatModel(options: AzureChatModelOptions): ChatModel {
  const baseURL = azureBaseURL(options);
  const apiVersion = options.apiVersion ?? AZURE_API_VERSION;
  const deployments = options.deployments ?? {};
  const { where, upstream } = describeUpstream('azure', baseURL);
  const answerLimit = options.answerLimit ?? DEFAULT_ANSWER_LIMIT;
  const fetch = modelFetch({ fetch: options.fetch, answerLimit, where });
  let azure: ReturnType<typeof createAzure>;
  try {
    // The base URL, key and version always given: the package would otherwise read AZURE_RESOURCE_NAME and AZURE_API_KEY.
    // Deployment-based URLs: without them the package calls the v1 routes, and a base URL off *.openai.azure.com (a gateway) without any api-version.
    azure = createAzure({ baseURL, apiKey: options.apiKey, apiVersion, useDeploymentBasedUrls: true, fetch });
  } catch (error) {
    throw PlatformError.invalid(`azureChatModel: ${error instanceof Error ? error.message : String(error)}`);
  }

  return aiSdkChatModel({
    provider: 'azure',
    where,
    upstream,
    model: (modelId) => azure.chat(deployments[modelId] ?? modelId),
    capabilities: CAPABILITIES,
    ...openaiFamilyOptions({ apiKey: options.apiKey, timeoutMs: options.timeoutMs, maxRetries: options.maxRetries, answerLimit }),
    async listModels(signal) {
      const url = `${baseURL}/models?api-version=${encodeURIComponent(apiVersion)}`;
      const body = await getJson(fetch, url, { 'api-key': options.apiKey }, signal);
      const data = listData(body);
      if (!data) throw new PlatformError('upstream_error', `${where} answered GET ${upstream}/models with an unexpected shape`, { details: { provider: 'azure', upstream } });
      const configured = Object.keys(deployments);
      if (configured.length > 0) return configured;
      return data
        .filter((model) => member(member(model, 'capabilities'), 'chat_completion') === true)
        .map((model) => member(model, 'id'))
        .filter((id): id is string => typeof id === 'string');
    },
  });
}
