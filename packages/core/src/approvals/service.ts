import type { z } from 'zod';
import type { ToolCall } from '../agent/chat-model.js';
import { checkForm } from '../agent/form-fields.js';
import type { ElicitationAnswer, ElicitationRequest, PendingApproval, PendingQuestion } from '../agent/questions.js';
import type { Caller, PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { randomString } from '../ids.js';
import { offsetPageFields } from '../paging.js';
import type { ApprovalResponse, DecideRequest, DecisionResponse, ListApprovalsQuery, ListApprovalsResponse } from '../schemas/approvals.js';
import type { ChatCompletionChunk, ChatCompletionResponse } from '../schemas/completion-answers.js';
import type { ApprovalDecision, ApprovalRecord } from '../storage/types.js';
import { claimTurn, type ResumeHold } from './claim.js';
import { answerOf, iso, pendingOf, toView } from './views.js';

/** How long a tool call waits for a person's decision before it counts as denied: 24 hours. */
export const DEFAULT_APPROVAL_TTL_MS = 86_400_000;
/** How long an MCP server's question waits for the person before it is declined: 10 minutes (server-everything's own limit). */
export const DEFAULT_QUESTION_TIMEOUT_MS = 600_000;
/** The notifier channel of decided questions: `{ id }`; the instance whose tool waits for it reads the answer. */
export const APPROVAL_CHANNEL = 'approvals.decided';

export interface ApprovalOptions {
  /** How long a tool call waits for approval; past it, it is denied (reason: expired). Default {@link DEFAULT_APPROVAL_TTL_MS}. */
  readonly ttlMs?: number;
  /** How long an MCP server's question (elicitation) waits; past it, it is declined. Default {@link DEFAULT_QUESTION_TIMEOUT_MS}. */
  readonly questionTimeoutMs?: number;
  /** How often a waiting tool reads its question again without being woken (a missed notification). Default 1,000 ms. */
  readonly pollMs?: number;
  /**
   * How long the claim of a paused turn's continuation holds without being renewed (the running
   * continuation renews it every third of this): past it, the continuation counts as dead (its
   * process was killed) and the next decision or message may continue the turn. Default {@link DEFAULT_RESUME_LEASE_MS}.
   */
  readonly resumeLeaseMs?: number;
}

/** How long an unrenewed claim of a continuation holds: 60 s. */
export const DEFAULT_RESUME_LEASE_MS = 60_000;

/** A paused turn's continuation, in the completions route's shape. */
export type ContinuedRun = { stream: false; body: ChatCompletionResponse } | { stream: true; chunks: AsyncIterable<ChatCompletionChunk> };

export interface ApprovalsDeps {
  readonly options: ApprovalOptions | undefined;
  /** Continues the paused turn of a decided group (the completions area): any instance can, from storage. */
  continueRun(caller: Caller, approval: ApprovalRecord, options: { stream: boolean; includeUsage: boolean; streamId?: string | undefined; signal?: AbortSignal | undefined }): Promise<ContinuedRun>;
  /** The calls of the chat's last assistant message that no tool message answers yet (the completions area reads the chat). */
  waitingCalls(caller: Caller, chatId: string): Promise<ToolCall[]>;
}

type Decide = z.output<typeof DecideRequest>;
type ListQuery = z.output<typeof ListApprovalsQuery>;
/** `POST /api/v1/approvals/{id}`: a continued run, or the decision (with what its group still waits for). */
export type DecideResult = ContinuedRun | { stream: false; body: DecisionResponse };

/**
 * Questions a run asks a person: tool calls to approve (the turn pauses and is stored; the last
 * decision continues it, on whichever instance gets it) and MCP servers' elicitations (the tool
 * call waits; the answer reaches its instance through storage and the notifier). Each belongs to
 * the user who started the run and is decided once; one left undecided expires (denied, or
 * declined) when it is next read or waited on.
 */
export class ApprovalsService {
  readonly #ctx: PlatformContext;
  readonly #deps: ApprovalsDeps;
  readonly #ttlMs: number;
  readonly #questionMs: number;
  readonly #pollMs: number;
  readonly #leaseMs: number;

  constructor(ctx: PlatformContext, deps: ApprovalsDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
    this.#ttlMs = deps.options?.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
    this.#questionMs = deps.options?.questionTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS;
    this.#pollMs = deps.options?.pollMs ?? 1000;
    this.#leaseMs = deps.options?.resumeLeaseMs ?? DEFAULT_RESUME_LEASE_MS;
  }

  #record(caller: Caller, base: Pick<ApprovalRecord, 'projectId' | 'chatId' | 'kind' | 'groupId' | 'message' | 'schema' | 'resume'>, call: ToolCall, ttlMs: number): ApprovalRecord {
    const now = this.#ctx.clock.now();
    return {
      id: this.#ctx.ids.next('approval'),
      userId: caller.userId,
      ...base,
      callId: call.id,
      tool: call.name,
      arguments: call.arguments,
      state: 'pending',
      reason: null,
      content: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ttlMs),
      decidedAt: null,
    };
  }

  /** Stores the calls a paused turn holds for approval (one group); `resume` is what continuing it needs besides the chat. */
  async pause(caller: Caller, run: { projectId: string; chatId: string; calls: readonly ToolCall[]; resume: Record<string, unknown> }): Promise<PendingApproval[]> {
    const groupId = `grp_${randomString(20)}`;
    const base = { projectId: run.projectId, chatId: run.chatId, kind: 'tool' as const, groupId, message: null, schema: null, resume: run.resume };
    const records = run.calls.map((call) => this.#record(caller, base, call, this.#ttlMs));
    await this.#ctx.storage.approvals.insert(records);
    return records.map(pendingOf);
  }

  /**
   * The decisions of a chat's waiting calls, for the turn that continues it, and that turn's
   * claim: throws `conflict` while one is still pending (not expired; expired ones are denied
   * now) or while another continuation holds the turn (its claim renewed within
   * `resumeLeaseMs`), so a paused turn is continued once. Calls without an approval (the
   * client's functions) are not answered here.
   */
  async settle(caller: Caller, chatId: string, callIds: readonly string[]): Promise<{ calls: { callId: string; denied?: string }[]; hold: ResumeHold }> {
    const found = await this.#callsOf(caller, chatId, callIds);
    const pendingError = (waiting: readonly ApprovalRecord[]) =>
      new PlatformError('conflict', `The chat waits for a decision on ${waiting.map((r) => `${r.id} (${r.tool})`).join(', ')}: POST /api/v1/approvals/{id} first`, {
        details: { approvals: waiting.map((r) => r.id) },
      });
    const waiting = found.filter((r) => r.state === 'pending');
    if (waiting.length > 0) throw pendingError(waiting);
    const { records, hold } = await claimTurn(this.#ctx, caller.userId, chatId, found, this.#leaseMs, pendingError);
    const calls = records.map((r) => (r.state === 'approved' ? { callId: r.callId } : { callId: r.callId, denied: r.reason ?? '' }));
    return { calls, hold };
  }

  /**
   * Of a chat's waiting calls (`callIds`), the approvals still pending (expired ones denied now)
   * and the calls that have no approval at all (the client's functions).
   */
  async waiting(caller: Caller, chatId: string, callIds: readonly string[]): Promise<{ pending: PendingApproval[]; unapproved: string[] }> {
    const found = await this.#callsOf(caller, chatId, callIds);
    const approved = new Set(found.map((r) => r.callId));
    return { pending: found.filter((r) => r.state === 'pending').map(pendingOf), unapproved: callIds.filter((id) => !approved.has(id)) };
  }

  /** The tool-call approvals of a chat's calls `callIds`, expiry applied. */
  async #callsOf(caller: Caller, chatId: string, callIds: readonly string[]): Promise<ApprovalRecord[]> {
    const wanted = new Set(callIds);
    const page = await this.#ctx.storage.approvals.list({ userId: caller.userId, chatId, limit: 100, offset: 0 });
    return Promise.all(page.items.filter((r) => r.kind === 'tool' && wanted.has(r.callId)).map((r) => this.#fresh(r)));
  }

  /** Stores an MCP server's question of a running tool call; `answer` settles with the person's answer, a timeout (declined) or `signal` (cancelled). */
  async ask(
    caller: Caller,
    run: { projectId: string; chatId: string | null },
    call: ToolCall,
    request: ElicitationRequest,
    signal: AbortSignal | undefined,
  ): Promise<{ question: PendingQuestion; answer: Promise<ElicitationAnswer> }> {
    const base = { projectId: run.projectId, chatId: run.chatId, kind: 'elicitation' as const, groupId: `grp_${randomString(20)}`, message: request.message, schema: request.schema, resume: null };
    const record = this.#record(caller, base, call, this.#questionMs);
    await this.#ctx.storage.approvals.insert([record]);
    const question: PendingQuestion = { id: record.id, callId: call.id, tool: call.name, message: request.message, schema: request.schema, expiresAt: iso(record.expiresAt) };
    return { question, answer: this.#answer(record, signal) };
  }

  /** Waits for the question's answer: woken by the notifier, read again every `pollMs`, declined at its expiry, cancelled with the run. */
  #answer(record: ApprovalRecord, signal: AbortSignal | undefined): Promise<ElicitationAnswer> {
    const { storage, notifier } = this.#ctx;
    return new Promise((resolve) => {
      let done = false;
      const finish = (answer: ElicitationAnswer) => {
        if (done) return;
        done = true;
        unsubscribe();
        clearInterval(poll);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      const check = () =>
        storage.approvals.get(record.userId, record.id).then(
          (r) => {
            if (!r) finish({ action: 'cancel' });
            else if (r.state !== 'pending') finish(answerOf(r));
          },
          () => {}, // storage unreachable: the next poll reads again
        );
      const close = (state: 'declined' | 'cancelled', reason: string) =>
        this.#decideOnce(record, { state, reason, content: null, decidedAt: this.#ctx.clock.now() }).then(
          (r) => finish(r ? answerOf(r) : { action: state === 'declined' ? 'decline' : 'cancel' }),
          () => finish({ action: state === 'declined' ? 'decline' : 'cancel' }),
        );
      const unsubscribe = notifier.subscribe(APPROVAL_CHANNEL, (payload) => {
        if ((payload as { id?: unknown } | null)?.id === record.id) void check();
      });
      const poll = setInterval(() => void check(), this.#pollMs);
      poll.unref?.();
      const timer = setTimeout(() => void close('declined', `No answer within ${Math.round(this.#questionMs / 1000)} s`), Math.max(0, record.expiresAt.getTime() - this.#ctx.clock.now().getTime()));
      timer.unref?.();
      const onAbort = () => void close('cancelled', 'The run was stopped');
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Decides `record` if it is still pending; the record as it ends up (someone else's decision when they were first), undefined when gone. */
  async #decideOnce(record: ApprovalRecord, decision: ApprovalDecision): Promise<ApprovalRecord | undefined> {
    const result = await this.#ctx.storage.approvals.decide(record.userId, record.id, decision);
    if (result.outcome === 'not_found') return undefined;
    if (result.outcome === 'decided') await this.#ctx.notifier.publish(APPROVAL_CHANNEL, { id: record.id }).catch(() => {});
    return result.record;
  }

  /** The record with its expiry applied: a pending one past `expiresAt` is denied (declined) now. */
  async #fresh(r: ApprovalRecord): Promise<ApprovalRecord> {
    const now = this.#ctx.clock.now();
    if (r.state !== 'pending' || r.expiresAt.getTime() > now.getTime()) return r;
    const reason = r.kind === 'tool' ? `Not decided within ${Math.round(this.#ttlMs / 1000)} s: the approval expired` : `No answer within ${Math.round(this.#questionMs / 1000)} s`;
    return (await this.#decideOnce(r, { state: r.kind === 'tool' ? 'denied' : 'declined', reason, content: null, decidedAt: now })) ?? r;
  }

  async #get(caller: Caller, id: string): Promise<ApprovalRecord> {
    const found = await this.#ctx.storage.approvals.get(caller.userId, id);
    if (!found) throw PlatformError.notFound('Approval not found');
    return this.#fresh(found);
  }

  /** `GET /api/v1/approvals/{id}`. */
  async get(caller: Caller, id: string): Promise<ApprovalResponse> {
    return { success: true, approval: toView(await this.#get(caller, id)) };
  }

  /** `GET /api/v1/approvals`: the caller's questions, newest first (of a chat, in a state). */
  async list(caller: Caller, q: ListQuery): Promise<ListApprovalsResponse> {
    const page = await this.#ctx.storage.approvals.list({ userId: caller.userId, chatId: q.chatId, state: q.state, limit: q.limit, offset: q.offset });
    const items = await Promise.all(page.items.map((r) => this.#fresh(r)));
    // An expired one is no longer pending: a list of pending ones leaves it out.
    const shown = q.state === 'pending' ? items.filter((r) => r.state === 'pending') : items;
    return { success: true, approvals: shown.map(toView), ...offsetPageFields(q.offset, page) };
  }

  /**
   * `POST /api/v1/approvals/{id}`: decides a tool call (`approve`, `deny`) or answers an
   * elicitation (`accept` with `content`, `decline`, `cancel`), once. The last decision of a
   * paused turn continues it and answers the continuation (streamed with `stream: true`);
   * any other answers the decision.
   */
  async decide(caller: Caller, id: string, body: Decide, signal?: AbortSignal): Promise<DecideResult> {
    const result = await this.#decide(caller, await this.#get(caller, id), body);
    const { record } = result;
    const group = record.kind === 'tool' ? await this.#ctx.storage.approvals.group(caller.userId, record.groupId) : [];
    if (record.kind === 'tool' && result.remaining === 0) {
      // Read after the decision is stored, as the client's request reads the decisions after
      // storing its results: whichever of the two comes last sees the other and continues.
      const held = new Set(group.map((r) => r.callId));
      const client = record.chatId ? (await this.#deps.waitingCalls(caller, record.chatId)).filter((c) => !held.has(c.id)) : [];
      if (client.length === 0) {
        return this.#deps.continueRun(caller, record, { stream: body.stream === true, includeUsage: body.stream_options?.include_usage === true, streamId: body.streamId, signal });
      }
      const tool_calls = client.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
      return { stream: false, body: { success: true, approval: toView(record), pending: [], tool_calls } };
    }
    return { stream: false, body: { success: true, approval: toView(record), pending: group.filter((r) => r.state === 'pending').map((r) => r.id) } };
  }

  /**
   * Decides a tool call waiting for approval without continuing its turn (the responses route
   * continues it as a new response): the decided record. `not_found` for an id the caller has
   * not; `invalid_request` (naming `param`) for an MCP server's question; `conflict` once decided.
   */
  async decideCall(caller: Caller, id: string, decision: { approve: boolean; reason?: string | null | undefined }, param: string): Promise<ApprovalRecord> {
    const record = await this.#get(caller, id);
    if (record.kind !== 'tool') {
      throw PlatformError.invalid(`${param}: ${id} is an MCP server's question, answered with POST /api/v1/approvals/{id}`, [{ path: param.split('.'), code: 'custom', message: 'not a tool call' }]);
    }
    return (await this.#decide(caller, record, { decision: decision.approve ? 'approve' : 'deny', reason: decision.reason ?? undefined })).record;
  }

  /** Checks and stores one decision of `record` (told the others deciding its group); the decided record and how many of its group are still pending. */
  async #decide(caller: Caller, record: ApprovalRecord, body: Pick<Decide, 'decision' | 'reason' | 'content'>): Promise<{ record: ApprovalRecord; remaining: number }> {
    const id = record.id;
    const tool = record.kind === 'tool';
    const allowed = tool ? ['approve', 'deny'] : ['accept', 'decline', 'cancel'];
    if (!allowed.includes(body.decision)) {
      throw PlatformError.invalid(`decision: ${record.kind === 'tool' ? 'a tool call is decided with approve or deny' : 'a question is answered with accept, decline or cancel'}`, [
        { path: ['decision'], code: 'invalid_value', message: `must be ${allowed.join(', ')}` },
      ]);
    }
    if (body.content !== undefined && body.decision !== 'accept') {
      throw PlatformError.invalid('content: only an accepted question takes content', [{ path: ['content'], code: 'custom', message: 'only with accept' }]);
    }
    if (record.state !== 'pending') throw this.#decided(record);
    const content = body.decision === 'accept' ? checkForm(record.schema ?? {}, body.content ?? {}) : null;
    const state = ({ approve: 'approved', deny: 'denied', accept: 'accepted', decline: 'declined', cancel: 'cancelled' } as const)[body.decision];
    const result = await this.#ctx.storage.approvals.decide(caller.userId, id, { state, reason: body.reason ?? null, content, decidedAt: this.#ctx.clock.now() });
    if (result.outcome === 'not_found') throw PlatformError.notFound('Approval not found');
    if (result.outcome === 'conflict') throw this.#decided(result.record);
    await this.#ctx.notifier.publish(APPROVAL_CHANNEL, { id }).catch(() => {});
    return { record: result.record, remaining: result.remaining };
  }

  #decided(r: ApprovalRecord): PlatformError {
    return new PlatformError('conflict', `Approval ${r.id} was already decided: ${r.state}${r.reason ? ` (${r.reason})` : ''}`, { details: { state: r.state } });
  }
}
