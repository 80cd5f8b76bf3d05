import type { ErrorCode } from '@agent-platform/core';
import { CreateResponseRequest, DeletedResponse, GetResponseQuery, InputItemList, InputItemsQuery, ResponseIdParam, ResponseResource, ResponseStreamEvent } from '@agent-platform/core/schemas';
import { type ApiRoute, route } from '../route.js';

/** A response may name an unknown project, chat or previous response, and calls a model provider. */
const CREATE_ERRORS: readonly ErrorCode[] = ['not_found', 'conflict', 'rate_limited', 'upstream_error', 'unavailable', 'timeout'];
const TAG = 'Responses';

/** The Open Responses API (docs/RESPONSES.md): create, read, delete, cancel, input items. */
export const responsesRoutes: readonly ApiRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/responses',
    summary: 'Open Responses: create a response; model is a project id (the agent) or a model name; stream, background and previous_response_id as the specification says',
    tag: TAG,
    body: CreateResponseRequest,
    response: ResponseResource,
    events: ResponseStreamEvent,
    kind: 'responses',
    bodyLimit: 'completion',
    errors: CREATE_ERRORS,
    audit: { none: 'Creating a response is usage of a model (as a chat completion is), not a change of a resource' },
    handler: (p, i) => p.responses.create(i.caller, i.body, { signal: i.signal }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/responses/{id}',
    summary:
      'A stored response as it stands (queued, in_progress, completed, failed, incomplete, cancelled); with stream=true its events (after starting_after), recorded or made from the stored response, live until it ends',
    tag: TAG,
    params: ResponseIdParam,
    query: GetResponseQuery,
    response: ResponseResource,
    events: ResponseStreamEvent,
    kind: 'responses',
    handler: async (p, i) =>
      i.query.stream === 'true'
        ? { stream: true as const, replay: true, events: await p.responses.replay(i.caller, i.params.id, i.query.starting_after, i.signal) }
        : { stream: false as const, body: await p.responses.get(i.caller, i.params.id) },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/responses/{id}',
    summary: 'Delete a stored response (stopping it first when it runs); its chat keeps its messages',
    tag: TAG,
    params: ResponseIdParam,
    response: DeletedResponse,
    kind: 'responses',
    audit: { resource: 'response', action: 'delete', id: 'params.id' },
    handler: async (p, i) => ({ stream: false as const, body: await p.responses.delete(i.caller, i.params.id) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/responses/{id}/cancel',
    summary: 'Cancel a queued or running response (background or streamed), on whichever instance runs it; answers it cancelled',
    tag: TAG,
    params: ResponseIdParam,
    response: ResponseResource,
    kind: 'responses',
    audit: { resource: 'response', action: 'cancel', id: 'params.id' },
    handler: async (p, i) => ({ stream: false as const, body: await p.responses.cancel(i.caller, i.params.id) }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/responses/{id}/input_items',
    summary: "A page of a stored response's input items (limit, order: desc by default, after: the last id of the previous page)",
    tag: TAG,
    params: ResponseIdParam,
    query: InputItemsQuery,
    response: InputItemList,
    kind: 'responses',
    handler: async (p, i) => ({ stream: false as const, body: await p.responses.inputItems(i.caller, i.params.id, i.query) }),
  }),
];
