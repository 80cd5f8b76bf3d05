import type { PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { randomString } from '../ids.js';
import type { ApprovalRecord } from '../storage/types.js';

/** A continuation's hold on a paused turn: renewed while it runs; `end(false)` (it failed) frees it at once. */
export interface ResumeHold {
  end(succeeded: boolean): void;
}

const iso = (d: Date) => d.toISOString();

/**
 * Claims the continuation of the paused turn whose decided calls are `found` (each of their
 * groups, in storage: `ApprovalRepository.claim`): the decisions as read with the claim, and
 * the hold, renewed every third of `leaseMs` until it ends. Throws `conflict` while a call is
 * still pending (`pendingError`) or another continuation holds the turn.
 */
export async function claimTurn(
  ctx: PlatformContext,
  userId: string,
  chatId: string,
  found: readonly ApprovalRecord[],
  leaseMs: number,
  pendingError: (waiting: readonly ApprovalRecord[]) => PlatformError,
): Promise<{ records: ApprovalRecord[]; hold: ResumeHold }> {
  const by = `run_${randomString(20)}`;
  const groups = [...new Set(found.map((r) => r.groupId))];
  const claimed: string[] = [];
  const { approvals } = ctx.storage;
  const release = () => Promise.all(claimed.map((g) => approvals.release(userId, g, by))).catch(() => {});
  const records: ApprovalRecord[] = [];
  const wanted = new Set(found.map((r) => r.callId));
  for (const groupId of groups) {
    const now = ctx.clock.now();
    const result = await approvals.claim(userId, groupId, { by, at: now, staleBefore: new Date(now.getTime() - leaseMs) });
    if (result.outcome === 'claimed') {
      claimed.push(groupId);
      records.push(...result.records.filter((r) => wanted.has(r.callId)));
      continue;
    }
    await release();
    if (result.outcome === 'pending') throw pendingError(result.records.filter((r) => r.state === 'pending'));
    throw new PlatformError(
      'conflict',
      `The turn paused in chat ${chatId} is already being continued (since ${iso(result.at)}): every decision is recorded; read the chat (or its stream) for the continuation`,
      { details: { approvals: result.records.map((r) => r.id), continuing: true } },
    );
  }
  // Renewed while the continuation runs: a claim left unrenewed for resumeLeaseMs was its dead process's.
  const renew = setInterval(
    () => {
      for (const g of claimed) void approvals.renew(userId, g, by, ctx.clock.now()).catch(() => {});
    },
    Math.max(10, Math.floor(leaseMs / 3)),
  );
  renew.unref?.();
  let ended = false;
  const hold: ResumeHold = {
    end(succeeded) {
      if (ended) return;
      ended = true;
      clearInterval(renew);
      // Done, the claim stays: the chat now answers the calls. Failed, it is freed for the next try.
      if (!succeeded) void release();
    },
  };
  return { records, hold };
}
