import type { Page } from './page.js';

/** What a pending question asks: a tool call to approve, or an MCP server's form (`elicitation/create`). */
export type ApprovalKind = 'tool' | 'elicitation';

/**
 * Where a question stands. A tool call is `approved` or `denied` (an expired one is `denied`
 * with the expiry as its reason); an elicitation is `accepted`, `declined` or `cancelled` (a
 * timed-out one is `declined`). Only a `pending` one may be decided.
 */
export type ApprovalState = 'pending' | 'approved' | 'denied' | 'accepted' | 'declined' | 'cancelled';

/** A question a person answers for a run: stored, so it outlives the process that asked it. */
export interface ApprovalRecord {
  readonly id: string;
  /** The user who started the run; nobody else sees it. */
  readonly userId: string;
  readonly projectId: string;
  /** The chat the run belongs to; null for an elicitation of a run without a chat. */
  readonly chatId: string | null;
  readonly kind: ApprovalKind;
  /** The questions one pause of a run asked together (several tool calls of one step); the run goes on once all are decided. */
  readonly groupId: string;
  /** The model's tool call id. */
  readonly callId: string;
  /** The function name the model called (`mcp__<server>__<tool>` for an MCP tool). */
  readonly tool: string;
  /** The call's arguments, as the model gave them (JSON text). */
  readonly arguments: string;
  /** `elicitation`: what the server asks the person. */
  readonly message: string | null;
  /** `elicitation`: the JSON Schema of the form (`requestedSchema`). */
  readonly schema: Record<string, unknown> | null;
  /**
   * `tool`: what the run needs to go on besides the chat (the request's settings, JSON), so any
   * instance can continue it.
   */
  readonly resume: Record<string, unknown> | null;
  readonly state: ApprovalState;
  /** Why it was denied, declined or cancelled (the person's reason, or the expiry). */
  readonly reason: string | null;
  /** `elicitation` accepted: the form's content, defaults applied. */
  readonly content: Record<string, unknown> | null;
  readonly createdAt: Date;
  /** When a still pending question counts as denied (declined). */
  readonly expiresAt: Date;
  readonly decidedAt: Date | null;
}

/** A decision of a pending question. */
export interface ApprovalDecision {
  readonly state: Exclude<ApprovalState, 'pending'>;
  readonly reason: string | null;
  readonly content: Record<string, unknown> | null;
  readonly decidedAt: Date;
}

/**
 * Who continues a paused turn (one group of decided tool calls): `by` names the continuation,
 * `at` when it took (or last renewed) the claim. A claim older than `staleBefore` was left by a
 * continuation that died and may be taken again.
 */
export interface ResumeClaim {
  readonly by: string;
  readonly at: Date;
  readonly staleBefore: Date;
}

/** The outcome of claiming a group's continuation, with the group's questions as they are. */
export type ResumeClaimResult =
  | { readonly outcome: 'claimed'; readonly records: ApprovalRecord[] }
  /** A question of the group is still pending: nothing to continue yet. */
  | { readonly outcome: 'pending'; readonly records: ApprovalRecord[] }
  /** Another continuation holds a claim newer than `staleBefore`. */
  | { readonly outcome: 'taken'; readonly by: string; readonly at: Date; readonly records: ApprovalRecord[] };

export interface ApprovalRepository {
  /** Inserts the questions of one pause (all or none). */
  insert(records: readonly ApprovalRecord[]): Promise<void>;
  /** The user's question of that id. */
  get(userId: string, id: string): Promise<ApprovalRecord | undefined>;
  /** The user's questions, newest first, optionally of one chat and in one state. */
  list(query: { userId: string; chatId?: string | undefined; state?: ApprovalState | undefined; limit: number; offset: number }): Promise<Page<ApprovalRecord>>;
  /** The questions of one pause, oldest first. */
  group(userId: string, groupId: string): Promise<ApprovalRecord[]>;
  /**
   * Decides a pending question: one guarded UPDATE (`state = 'pending'`), so of concurrent
   * deciders on every instance exactly one wins. Under the user's lock, so the one who decides
   * the last pending question of a group sees every other decision (`remaining` 0) and no two
   * see it: that one continues the run. Answers `not_found` (not the user's), `conflict`
   * (already decided, with the record as it is), or the decided record and how many of its
   * group are still pending.
   */
  decide(
    userId: string,
    id: string,
    decision: ApprovalDecision,
  ): Promise<{ outcome: 'not_found' } | { outcome: 'conflict'; record: ApprovalRecord } | { outcome: 'decided'; record: ApprovalRecord; remaining: number }>;
  /**
   * Claims the continuation of a group whose questions are all decided: in one transaction under
   * the user's lock it reads the group's decisions and sets its claim (`resumedBy`, `resumedAt`)
   * only when none is held or the one held is older than `staleBefore`. Of concurrent claimers on
   * every instance exactly one gets `claimed`.
   */
  claim(userId: string, groupId: string, claim: ResumeClaim): Promise<ResumeClaimResult>;
  /** Renews a claim its holder still has (`at` the new time): false when it lost it (taken after it went stale). */
  renew(userId: string, groupId: string, by: string, at: Date): Promise<boolean>;
  /** Gives up a claim its holder still has (a continuation that failed before it stored the turn): the next one may claim at once. */
  release(userId: string, groupId: string, by: string): Promise<void>;
}
