import type { ErrorCode } from '@agent-platform/core';
import { ChatCompletionChunk, ChatCompletionRequest, ChatCompletionResponse, IdParam, ListModelsQuery, ListModelsResponse, ModelObject } from '@agent-platform/core/schemas';
import { type ApiRoute, route } from '../route.js';

/** A completion may name an unknown chat or project, and calls a model provider. */
const COMPLETION_ERRORS: readonly ErrorCode[] = ['not_found', 'conflict', 'rate_limited', 'upstream_error', 'unavailable', 'timeout'];

/** Why a completion records no audit event. */
const COMPLETION_NOT_A_CHANGE = 'A completion is usage of a model, not a change of a resource (the messages it keeps belong to the chat it names)';

/** OpenAI-compatible chat completions and the model list: their routes, in the order of the table (routes/index.ts). */
export const completionsRoutes: readonly ApiRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/chat/completions',
    summary: 'OpenAI-compatible chat completion: model is a project id (the agent) or a model name; chatId optional',
    tag: 'Chat completions',
    body: ChatCompletionRequest,
    response: ChatCompletionResponse,
    events: ChatCompletionChunk,
    kind: 'openai',
    bodyLimit: 'completion',
    errors: COMPLETION_ERRORS,
    audit: { none: COMPLETION_NOT_A_CHANGE },
    handler: (p, i) => p.completions.create(i.caller, i.body, { form: 'v1', signal: i.signal }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/ai/chat/completions',
    summary: "Chat-scoped completion: chatId required, the chat's project is the agent; answers success true too",
    tag: 'Chat completions',
    body: ChatCompletionRequest,
    response: ChatCompletionResponse,
    events: ChatCompletionChunk,
    kind: 'openai',
    bodyLimit: 'completion',
    errors: COMPLETION_ERRORS,
    audit: { none: COMPLETION_NOT_A_CHANGE },
    handler: (p, i) => p.completions.create(i.caller, i.body, { form: 'ai', signal: i.signal }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/models',
    summary:
      "OpenAI-compatible model list: the caller's projects (agents), newest first, a page at a time (limit, after: the last id of the previous page); an id is what chat completions take as model",
    tag: 'Chat completions',
    query: ListModelsQuery,
    response: ListModelsResponse,
    kind: 'openai',
    handler: async (p, i) => ({ stream: false as const, body: await p.completions.listModels(i.caller, i.query) }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/models/{id}',
    summary: "OpenAI-compatible model object of one of the caller's projects",
    tag: 'Chat completions',
    params: IdParam,
    response: ModelObject,
    kind: 'openai',
    handler: async (p, i) => ({ stream: false as const, body: await p.completions.getModel(i.caller, i.params.id) }),
  }),
];
