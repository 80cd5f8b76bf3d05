import type { z } from 'zod';
import type { AgentPlanner, ChatOpener, StreamStore } from '../completions/types.js';
import type { Caller, PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { hasIdForm } from '../ids.js';
import type { CompletionMessage } from '../schemas/completions.js';
import type { InputItemList, ResponseResource, ResponseStreamEvent } from '../schemas/response-objects.js';
import type { CreateResponseRequest, InputItemsQuery } from '../schemas/responses.js';
import type { ResponseRecord, ResponseRecordStatus } from '../storage/types.js';
import { type ApprovalDecider, answerQuestions, answersQuestions, decideApprovals, invalid } from './answers.js';
import { type FileTextReader, readInputFiles } from './files.js';
import { endedResponse, followResponse, type Reading } from './follow.js';
import { storedInputItems, toCompletionMessages } from './input.js';
import { failureOf, responseEvents } from './items.js';
import { type EventRecorder, recordEvents, recordedLength } from './replay.js';
import { initialResource, planRequest } from './request.js';
import { notFound, RUNNING, type Run, Runs } from './runs.js';
import { responseChain, responseTarget } from './target.js';

export type { ApprovalDecider } from './answers.js';

export interface ResponsesDeps {
  /** The completions area's planner; undefined without `agent` (then `create` answers `unsupported`). */
  readonly planner: AgentPlanner | undefined;
  readonly chats: ChatOpener;
  readonly approvals: ApprovalDecider;
  /** Where streamed and background responses' events are recorded, for `GET ?stream=true` (the chat streams' store). */
  readonly streams: StreamStore;
  /** Reads `input_file` parts into text (the knowledge area's document readers); undefined without a knowledge base. */
  readonly files?: FileTextReader | undefined;
}

/** A response: the whole resource, or with `stream: true` the events to send. */
export type ResponseResult = { stream: false; body: ResponseResource } | { stream: true; events: AsyncIterable<ResponseStreamEvent> };

type Body = z.output<typeof CreateResponseRequest>;

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
  readonly #reading: Reading;

  constructor(ctx: PlatformContext, deps: ResponsesDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
    this.#runs = new Runs(ctx.notifier);
    this.#reading = { storage: ctx.storage, streams: deps.streams, runs: this.#runs };
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
    if (request.previous_response_id && !previous) throw notFound(request.previous_response_id, 'previous_response_id');
    // Answers to a running response's questions: it goes on, and is the answer.
    if (answersQuestions(request)) return this.#answered(caller, request, previous, options.signal);
    // Files are read first: one that cannot be read decides nothing.
    const given = typeof request.input === 'string' ? request.input : await readInputFiles(this.#deps.files, this.#ctx.fetch, caller, request.input, options.signal);
    const body = await decideApprovals(this.#deps.approvals, caller, request, previous);
    if (body.model && !named && hasIdForm('project', body.model)) {
      throw new PlatformError('not_found', `Project ${body.model} not found: "model" has the form of a project id, but none of your projects has it`, {
        issues: [{ path: ['model'], code: 'custom', message: 'none of your projects has this id' }],
      });
    }
    if (previous && RUNNING.includes(previous.status)) throw invalid('previous_response_id', `response ${previous.id} is still ${previous.status}: continue from it once it has ended`);
    const { chat, project, fresh } = await responseTarget(this.#ctx, caller, body, named, previous, store);

    // The conversation: the instructions, the earlier responses a chat does not hold (a plain
    // model's chain; a previous response whose chat was never made or is gone), the new input.
    const chain = previous && (!previous.chatId || fresh) ? await responseChain(this.#ctx.storage, caller.userId, previous) : [];
    const controller = new AbortController();
    const messages: CompletionMessage[] = [...(body.instructions ? [{ role: 'system' as const, content: body.instructions }] : []), ...chain, ...toCompletionMessages(given)];
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
    // first text does not wait for it); the run's own writes wait for it. The events of a
    // streamed or background response are recorded (from then on too), for GET ?stream=true.
    const recorder = store && (body.stream || body.background) ? recordEvents(this.#deps.streams, { userId: caller.userId, id, createdAt }) : undefined;
    const deferred = body.stream === true && !body.background;
    const events = this.#run(caller.userId, resource, plan, controller, store ? { insert, deferred } : undefined, recorder);
    if (body.background) {
      const queued = structuredClone(resource);
      // Recording before it runs: a reader finds every event. The client going away stops only its reading.
      await recorder?.open();
      void (async () => {
        for await (const _ of events);
      })();
      if (body.stream) return { stream: true, events: followResponse(this.#reading, caller.userId, id, undefined, options.signal) };
      return { stream: false, body: queued };
    }
    if (body.stream) return { stream: true, events };
    let failure: PlatformError | undefined;
    for await (const event of events) failure = failureOf(event) ?? failure;
    if (resource.status === 'failed' && failure) throw failure;
    return { stream: false, body: resource };
  }

  /** The run's events; the response is kept as it ends (a cancel that reached it first is not overwritten). */
  #run(
    userId: string,
    resource: ResponseResource,
    plan: Awaited<ReturnType<AgentPlanner['plan']>>,
    controller: AbortController,
    storing: { insert: () => Promise<void>; deferred: boolean } | undefined,
    recorder: EventRecorder | undefined,
  ): AsyncGenerator<ResponseStreamEvent> {
    const { storage, clock } = this.#ctx;
    let finished!: () => void;
    const run: Run = { userId, resource, controller, done: new Promise<void>((resolve) => (finished = resolve)), cancelled: false, recorder };
    let last = -1;
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
          last = event.sequence_number;
          recorder?.push(event);
          yield event;
          if (!kept && event.sequence_number > 1)
            setImmediate(() => {
              keep();
              recorder?.open();
            });
        }
      } finally {
        // Left before its end (the client went away): the run stopped there.
        if (RUNNING.includes(resource.status)) {
          controller.abort();
          resource.status = 'cancelled';
          const message = 'The client went away before the response ended';
          resource.error = { code: 'cancelled', message };
          recorder?.push({ type: 'error', sequence_number: ++last, error: { code: 'aborted', message, param: null } });
          recorder?.push({ type: 'response.failed', sequence_number: ++last, response: structuredClone(resource) });
        }
        // A stream that ended before its recording began is recorded now, whole; the recording
        // exists before the response reads as ended (a reader then finds it).
        await recorder?.open();
        void recorder?.end();
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

  /**
   * `GET /api/v1/responses/{id}?stream=true`: the response's events after `starting_after`, live
   * until it ends: as recorded (a streamed or background response), else made from the stored
   * response once it has ended. `not_found` before any event for an id the caller has not.
   */
  async replay(caller: Caller, id: string, after: number | undefined, signal?: AbortSignal): Promise<AsyncIterable<ResponseStreamEvent>> {
    if (!this.#runs.get(caller.userId, id) && !(await this.#ctx.storage.responses.get(caller.userId, id))) throw notFound(id);
    return followResponse(this.#reading, caller.userId, id, after, signal);
  }

  /**
   * Answers the questions of the running response `previous` (its MCP servers' elicitations):
   * it goes on, and is the answer: its events from now on (`stream`), or the whole response once it has ended.
   */
  async #answered(caller: Caller, body: Body, previous: ResponseRecord | undefined, signal: AbortSignal | undefined): Promise<ResponseResult> {
    const id = previous?.id ?? '';
    const seen = body.stream ? await recordedLength(this.#deps.streams, id) : 0;
    await answerQuestions(this.#deps.approvals, caller, body, previous);
    if (body.stream) return { stream: true, events: followResponse(this.#reading, caller.userId, id, seen - 1, signal) };
    return { stream: false, body: await endedResponse(this.#reading, caller.userId, id, signal) };
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
