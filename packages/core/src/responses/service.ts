import type { z } from 'zod';
import type { AgentPlanner, ChatOpener } from '../completions/types.js';
import type { Caller, PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { hasIdForm } from '../ids.js';
import type { ApprovalResponse } from '../schemas/approvals.js';
import type { CompletionMessage } from '../schemas/completions.js';
import type { InputItemList, ResponseResource, ResponseStreamEvent } from '../schemas/response-objects.js';
import type { CreateResponseRequest, InputItemsQuery } from '../schemas/responses.js';
import type { ChatRecord, ProjectRecord, ResponseRecord, ResponseRecordStatus } from '../storage/types.js';
import { type StoredInputItem, storedInputItems, storedToMessages, toCompletionMessages } from './input.js';
import { failureOf, responseEvents } from './items.js';
import { initialResource, planRequest } from './request.js';
import { type Run, Runs } from './runs.js';

/** The approvals area: the approvals an `mcp_approval_response` decides. */
export interface ApprovalDecider {
  get(caller: Caller, id: string): Promise<ApprovalResponse>;
  decideCall(caller: Caller, id: string, decision: { approve: boolean; reason?: string | null | undefined }, param: string): Promise<unknown>;
}

export interface ResponsesDeps {
  /** The completions area's planner; undefined without `agent` (then `create` answers `unsupported`). */
  readonly planner: AgentPlanner | undefined;
  readonly chats: ChatOpener;
  readonly approvals: ApprovalDecider;
}

/** A response: the whole resource, or with `stream: true` the events to send. */
export type ResponseResult = { stream: false; body: ResponseResource } | { stream: true; events: AsyncIterable<ResponseStreamEvent> };

type Body = z.output<typeof CreateResponseRequest>;

/** Most responses a chain of a plain model is read back through (`previous_response_id`). */
const MAX_CHAIN = 100;
const RUNNING: readonly ResponseRecordStatus[] = ['queued', 'in_progress'];

const notFound = (id: string, param = 'id') => new PlatformError('not_found', `Response ${id} not found`, { issues: [{ path: [param], code: 'custom', message: 'no response of yours has this id' }] });
const invalid = (param: string, message: string) => PlatformError.invalid(`${param}: ${message}`, [{ path: param.split('.'), code: 'custom', message }]);

/**
 * `/api/v1/responses`: the Open Responses API over the agent runs of the completions area's
 * planner. A response of a project keeps its turn in one of the project's chats (new, the
 * previous response's, or `chatId`); a plain model's responses chain through their stored input
 * and output. Stored responses are read, continued and cancelled from any instance.
 */
export class ResponsesService {
  readonly #ctx: PlatformContext;
  readonly #deps: ResponsesDeps;
  readonly #runs: Runs;

  constructor(ctx: PlatformContext, deps: ResponsesDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
    this.#runs = new Runs(ctx.notifier);
  }

  /** `POST /api/v1/responses`: the whole response, its events (`stream`), or at once the queued response (`background`). */
  async create(caller: Caller, request: Body, options: { signal?: AbortSignal | undefined } = {}): Promise<ResponseResult> {
    const planner = this.#deps.planner;
    if (!planner) throw new PlatformError('unsupported', 'Responses are not configured: construct AgentPlatform with `agent: { models }`');
    const { storage, clock, ids } = this.#ctx;
    const store = request.store !== false;
    const [named, previous] = await Promise.all([
      request.model ? storage.projects.get(caller.userId, request.model) : undefined,
      request.previous_response_id ? storage.responses.get(caller.userId, request.previous_response_id) : undefined,
    ]);
    const body = await this.#decisions(caller, request, previous);
    if (body.model && !named && hasIdForm('project', body.model)) {
      throw new PlatformError('not_found', `Project ${body.model} not found: "model" has the form of a project id, but none of your projects has it`, {
        issues: [{ path: ['model'], code: 'custom', message: 'none of your projects has this id' }],
      });
    }
    if (body.previous_response_id && !previous) throw notFound(body.previous_response_id, 'previous_response_id');
    if (previous && RUNNING.includes(previous.status)) throw invalid('previous_response_id', `response ${previous.id} is still ${previous.status}: continue from it once it has ended`);
    const { chat, project, fresh } = await this.#target(caller, body, named, previous, store);

    // The conversation: the instructions, the earlier responses a chat does not hold (a plain
    // model's chain; a previous response whose chat was never made or is gone), the new input.
    const chain = previous && (!previous.chatId || fresh) ? await this.#chain(caller.userId, previous) : [];
    const messages: CompletionMessage[] = [...(body.instructions ? [{ role: 'system' as const, content: body.instructions }] : []), ...chain, ...toCompletionMessages(body.input)];
    const controller = new AbortController();
    const signal = body.background ? controller.signal : AbortSignal.any([controller.signal, ...(options.signal ? [options.signal] : [])]);
    // A new chat of an id the service made is inserted with the turn when it completes; one of
    // the caller's chosen id is opened once the run is known to start. Either way a refused
    // request leaves nothing behind.
    // A turn that pauses for approval without a chat (store: false) is kept in a new chat of the project.
    const newChat = project ? () => this.#deps.chats.open(caller, ids.next('chat'), project.id) : undefined;
    const plan = await planner.plan(caller, planRequest(body, messages), { project, chat, insertChat: fresh && !body.chatId, newChat }, signal);
    if (fresh && chat && body.chatId) await this.#deps.chats.open(caller, chat.id, chat.projectId);

    const createdAt = clock.now();
    const id = ids.next('response');
    const resource = initialResource(body, {
      id,
      createdAt: Math.floor(createdAt.getTime() / 1000),
      model: plan.responseModel,
      status: body.background ? 'queued' : 'in_progress',
      chatId: chat?.id ?? null,
      sources: plan.sources.map(({ content: _, ...s }) => s),
    });
    const input = storedInputItems(body.input);
    const insert = () =>
      storage.responses.insert({
        id,
        userId: caller.userId,
        projectId: project?.id ?? null,
        chatId: chat?.id ?? null,
        previousResponseId: previous?.id ?? null,
        status: resource.status,
        createdAt,
        updatedAt: createdAt,
        resource: structuredClone(resource),
        input,
      });
    // A stream's response is written once its first event after the opening ones is out (the
    // first text does not wait for it); the run's own writes wait for it.
    const events = this.#run(caller.userId, resource, plan, controller, store ? { insert, deferred: body.stream === true } : undefined);
    if (body.background) {
      const queued = structuredClone(resource);
      void (async () => {
        for await (const _ of events);
      })();
      return { stream: false, body: queued };
    }
    if (body.stream) return { stream: true, events };
    let failure: PlatformError | undefined;
    for await (const event of events) failure = failureOf(event) ?? failure;
    if (resource.status === 'failed' && failure) throw failure;
    return { stream: false, body: resource };
  }

  /**
   * Decides the approvals the input's `mcp_approval_response` items answer (all checked first:
   * the caller's, of one chat, the previous response's), so the response continues their turn:
   * the request with that chat as `chatId` when it names none.
   */
  async #decisions(caller: Caller, body: Body, previous: ResponseRecord | undefined): Promise<Body> {
    const answers = typeof body.input === 'string' ? [] : body.input.flatMap((item, i) => (item.type === 'mcp_approval_response' ? [{ item, param: `input.${i}.approval_request_id` }] : []));
    if (answers.length === 0) return body;
    const approvals = await Promise.all(answers.map(({ item }) => this.#deps.approvals.get(caller, item.approval_request_id)));
    const chatId = approvals[0]?.approval.chatId;
    for (const [i, { approval }] of approvals.entries()) {
      const param = answers[i]?.param ?? 'input';
      const other = approval.chatId !== chatId ? `approval ${approvals[0]?.approval.id}` : previous?.chatId && previous.chatId !== chatId ? `previous_response_id ${previous.id}` : undefined;
      if (other || (body.chatId && body.chatId !== chatId)) throw invalid(param, `approval ${approval.id} belongs to chat ${approval.chatId}, not the chat of ${other ?? `chatId ${body.chatId}`}`);
    }
    for (const { item, param } of answers) await this.#deps.approvals.decideCall(caller, item.approval_request_id, { approve: item.approve, reason: item.reason }, param);
    return body.chatId || previous?.chatId || !chatId ? body : { ...body, chatId };
  }

  /** The project and chat of a new response: `chatId`'s, the previous response's, or a new chat of the project named (none with `store: false`). */
  async #target(
    caller: Caller,
    body: Body,
    named: ProjectRecord | undefined,
    previous: ResponseRecord | undefined,
    store: boolean,
  ): Promise<{ chat: ChatRecord | undefined; project: ProjectRecord | undefined; fresh: boolean }> {
    const { storage, clock, ids } = this.#ctx;
    const chatId = body.chatId ?? previous?.chatId ?? undefined;
    let chat = chatId ? await storage.chats.get(caller.userId, chatId) : undefined;
    if (previous?.chatId && previous.projectId && !chat) {
      // Its chat is made when a turn completes (a failed or cancelled first response has none) or
      // was deleted: made now, with the previous response's input and output before the new input.
      if (named && named.id !== previous.projectId) throw invalid('model', `response ${previous.id} belongs to project ${previous.projectId}: name that project, or leave model out`);
      const now = clock.now();
      const project = named ?? (await storage.projects.get(caller.userId, previous.projectId));
      return { chat: { id: previous.chatId, userId: caller.userId, projectId: previous.projectId, name: 'New chat', createdAt: now, updatedAt: now }, project, fresh: true };
    }
    if (chat) {
      if (named && named.id !== chat.projectId) throw invalid('model', `the chat ${chat.id} belongs to project ${chat.projectId}: name that project, or leave model out`);
      return { chat, project: named ?? (await storage.projects.get(caller.userId, chat.projectId)), fresh: false };
    }
    if (body.chatId && !named) throw invalid('chatId', 'a new chat needs "model" to be one of your projects');
    if (!named || (!store && !body.chatId)) return { chat: undefined, project: named, fresh: false };
    const now = clock.now();
    chat = { id: body.chatId ?? ids.next('chat'), userId: caller.userId, projectId: named.id, name: 'New chat', createdAt: now, updatedAt: now };
    return { chat, project: named, fresh: true };
  }

  /** A plain model's earlier responses (their input, then their output), oldest first. */
  async #chain(userId: string, last: ResponseRecord): Promise<CompletionMessage[]> {
    const items: StoredInputItem[][] = [];
    let at: ResponseRecord | undefined = last;
    for (let hops = 0; at && hops < MAX_CHAIN; hops++) {
      items.unshift([...(at.input as StoredInputItem[]), ...(at.resource.output as StoredInputItem[])]);
      at = at.previousResponseId && !at.chatId ? await this.#ctx.storage.responses.get(userId, at.previousResponseId) : undefined;
    }
    return storedToMessages(items.flat());
  }

  /** The run's events; the response is kept as it ends (a cancel that reached it first is not overwritten). */
  #run(
    userId: string,
    resource: ResponseResource,
    plan: Awaited<ReturnType<AgentPlanner['plan']>>,
    controller: AbortController,
    storing: { insert: () => Promise<void>; deferred: boolean } | undefined,
  ): AsyncGenerator<ResponseStreamEvent> {
    const { storage, clock } = this.#ctx;
    let finished!: () => void;
    const run: Run = { userId, resource, controller, done: new Promise<void>((resolve) => (finished = resolve)), cancelled: false };
    let kept: Promise<boolean> | undefined;
    // A response that could not be stored runs on, answered to its caller; it is not kept.
    const keep = () =>
      (kept ??= storing
        ? storing.insert().then(
            () => true,
            () => false,
          )
        : Promise.resolve(false));
    if (storing && !storing.deferred) keep();
    if (storing) this.#runs.add(resource.id, run);
    const now = () => Math.floor(clock.now().getTime() / 1000);
    return (async function* () {
      try {
        if (resource.status === 'queued') {
          // A background response starts: readers on every instance see it running.
          resource.status = 'in_progress';
          if (await keep()) await storage.responses.update(userId, resource.id, { status: 'in_progress', resource: structuredClone(resource), updatedAt: clock.now() }, ['queued']);
        }
        for await (const event of responseEvents(resource, plan.events, { sources: plan.sources, now, cancelled: () => run.cancelled })) {
          yield event;
          if (!kept && event.sequence_number > 1) setImmediate(keep);
        }
      } finally {
        // Left before its end (the client went away): the run stopped there.
        if (RUNNING.includes(resource.status)) {
          controller.abort();
          resource.status = 'cancelled';
          resource.error = { code: 'cancelled', message: 'The client went away before the response ended' };
        }
        if (await keep()) {
          const from: ResponseRecordStatus[] = resource.status === 'cancelled' ? [...RUNNING, 'cancelled'] : [...RUNNING];
          await storage.responses.update(userId, resource.id, { status: resource.status, resource: structuredClone(resource), updatedAt: clock.now() }, from).catch(() => false);
        }
        finished();
      }
    })();
  }

  /** `GET /api/v1/responses/{id}`: the response as it stands (live when it runs in this process). */
  async get(caller: Caller, id: string): Promise<ResponseResource> {
    const run = this.#runs.get(caller.userId, id);
    if (run) return structuredClone(run.resource);
    const record = await this.#ctx.storage.responses.get(caller.userId, id);
    if (!record) throw notFound(id);
    return { ...(record.resource as ResponseResource), status: record.status };
  }

  /** `DELETE /api/v1/responses/{id}`: deletes it (stopping it first when it runs). */
  async delete(caller: Caller, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    const record = await this.#ctx.storage.responses.get(caller.userId, id);
    if (!record) throw notFound(id);
    if (RUNNING.includes(record.status)) await this.#runs.cancel(caller.userId, id);
    await this.#ctx.storage.responses.delete(caller.userId, id);
    return { id, object: 'response', deleted: true };
  }

  /**
   * `POST /api/v1/responses/{id}/cancel`: stops a queued or running response, wherever it runs,
   * and answers it `cancelled` (with what it had produced when it runs here). Cancelling a
   * cancelled response answers it again; one that has ended is a 400.
   */
  async cancel(caller: Caller, id: string): Promise<ResponseResource> {
    const { storage, clock } = this.#ctx;
    const record = await storage.responses.get(caller.userId, id);
    if (!record) throw notFound(id);
    if (record.status === 'cancelled') return { ...(record.resource as ResponseResource), status: 'cancelled' };
    if (!RUNNING.includes(record.status)) throw invalid('id', `response ${id} has already ended (${record.status}): only a queued or running response can be cancelled`);
    const resource = { ...(record.resource as ResponseResource), status: 'cancelled' as const, error: { code: 'cancelled', message: 'The response was cancelled' } };
    // Written first, so the cancel holds even when the instance running it is gone.
    await storage.responses.update(caller.userId, id, { status: 'cancelled', resource, updatedAt: clock.now() }, RUNNING);
    const here = await this.#runs.cancel(caller.userId, id);
    if (!here) return resource;
    await here.done;
    return structuredClone(here.resource);
  }

  /** `GET /api/v1/responses/{id}/input_items`: a page of the response's input items (`order` desc by default, `after` an item id). */
  async inputItems(caller: Caller, id: string, query: z.output<typeof InputItemsQuery>): Promise<InputItemList> {
    const record = await this.#ctx.storage.responses.get(caller.userId, id);
    if (!record) throw notFound(id);
    const items = (query.order === 'asc' ? [...record.input] : [...record.input].reverse()) as InputItemList['data'];
    const from = query.after ? items.findIndex((item) => item.id === query.after) + 1 : 0;
    if (query.after && from === 0) throw invalid('after', `no input item ${query.after} in response ${id}`);
    const data = items.slice(from, from + query.limit);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: from + data.length < items.length };
  }

  /** Stops the responses running in this process. */
  close(): Promise<void> {
    return this.#runs.close();
  }
}
