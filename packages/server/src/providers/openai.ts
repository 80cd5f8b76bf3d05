import { openaiChatModel } from '@agent-platform/adapters-models/openai';
import { openaiResponsesChatModel } from '@agent-platform/adapters-models/openai-responses';
import type { ChatModel, ChatRequest } from '@agent-platform/core';

/** What both of OpenAI's upstreams take: the call's config, the address and the key. */
type OpenAIOptions = Omit<Parameters<typeof openaiChatModel>[0] & Parameters<typeof openaiResponsesChatModel>[0], 'apiKey' | 'baseURL'>;

/**
 * The `openai` provider's chat model: the Chat Completions API (`POST /chat/completions`), or
 * the Responses API (`POST /responses`) for a call whose provider options say
 * `api: 'responses'` (a project's or a request's: models served only there). `api` itself is
 * never sent upstream; the other options are the chosen API's. The Responses model is made on
 * its first use; both share the address, the key and the fetch.
 */
export function openaiModel(common: OpenAIOptions, baseUrl: string | undefined, apiKey: string | undefined): ChatModel {
  const address = baseUrl !== undefined ? { baseURL: baseUrl } : {};
  const chat = openaiChatModel({ ...common, ...(apiKey ? { apiKey } : {}), ...address });
  let responses: ChatModel | undefined;
  const responsesModel = () => {
    responses ??= openaiResponsesChatModel({ ...common, apiKey: apiKey ?? '', ...address });
    return responses;
  };
  const route = (request: ChatRequest): [ChatModel, ChatRequest] => {
    const { api, ...own } = request.providerOptions ?? {};
    const { providerOptions: _, ...rest } = request;
    const next = Object.keys(own).length > 0 ? { ...rest, providerOptions: own } : rest;
    return [api === 'responses' ? responsesModel() : chat, next];
  };
  return {
    provider: chat.provider,
    ...(chat.capabilities ? { capabilities: chat.capabilities } : {}),
    stream(request) {
      const [model, next] = route(request);
      return model.stream(next);
    },
    ...(chat.listModels ? { listModels: chat.listModels.bind(chat) } : {}),
  };
}
