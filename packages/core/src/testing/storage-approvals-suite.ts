import { beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRecord, StorageAdapter } from '../storage/types.js';
import { at, project, type StorageUnderTest } from './storage-rows.js';

/** Pending questions of runs: scoping by user, filters, groups, one decision each, cascades. */
export function describeApprovals(suite: StorageUnderTest): void {
  describe('approvals', () => {
    let storage: StorageAdapter;
    const approval = (id: string, n: number, overrides: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
      id,
      userId: 'user_a',
      projectId: 'proj_000001',
      chatId: 'chat_1',
      kind: 'tool',
      groupId: 'grp_1',
      callId: `call_${n}`,
      tool: 'delete_file',
      arguments: '{"path":"/tmp/x"}',
      message: null,
      schema: null,
      resume: { temperature: 0.2, tools: [{ type: 'function' }] },
      state: 'pending',
      reason: null,
      content: null,
      createdAt: at(n),
      expiresAt: at(n + 3600),
      decidedAt: null,
      ...overrides,
    });

    beforeEach(async () => {
      storage = suite.current();
      await storage.projects.insert(project('user_a', 1));
      await storage.projects.insert(project('user_b', 2));
      await storage.chats.insert({ id: 'chat_1', userId: 'user_a', projectId: 'proj_000001', name: 'c', createdAt: at(1), updatedAt: at(1) });
      await storage.chats.insert({ id: 'chat_2', userId: 'user_a', projectId: 'proj_000001', name: 'c', createdAt: at(1), updatedAt: at(1) });
    });

    it('round-trips every field, lists newest first by chat and state, and never answers another user', async () => {
      const a1 = approval('apv_1', 1);
      const a2 = approval('apv_2', 2);
      const e3 = approval('apv_3', 3, {
        chatId: null,
        kind: 'elicitation',
        groupId: 'grp_2',
        message: 'Your name?',
        schema: { type: 'object', properties: { name: { type: 'string', default: 'Ada' } } },
        resume: null,
      });
      await storage.approvals.insert([a1, a2]);
      await storage.approvals.insert([e3]);
      expect(await storage.approvals.get('user_a', 'apv_1')).toEqual(a1);
      expect(await storage.approvals.get('user_a', 'apv_3')).toEqual(e3);
      expect(await storage.approvals.get('user_b', 'apv_1')).toBeUndefined();
      const all = await storage.approvals.list({ userId: 'user_a', limit: 2, offset: 0 });
      expect(all.items.map((a) => a.id)).toEqual(['apv_3', 'apv_2']);
      expect(all.total).toBe(3);
      expect((await storage.approvals.list({ userId: 'user_a', chatId: 'chat_1', limit: 10, offset: 0 })).items.map((a) => a.id)).toEqual(['apv_2', 'apv_1']);
      expect((await storage.approvals.list({ userId: 'user_b', limit: 10, offset: 0 })).total).toBe(0);
      expect((await storage.approvals.group('user_a', 'grp_1')).map((a) => a.id)).toEqual(['apv_1', 'apv_2']);
      expect(await storage.approvals.group('user_b', 'grp_1')).toEqual([]);
      await storage.approvals.decide('user_a', 'apv_1', { state: 'denied', reason: 'no', content: null, decidedAt: at(9) });
      expect((await storage.approvals.list({ userId: 'user_a', state: 'pending', limit: 10, offset: 0 })).items.map((a) => a.id)).toEqual(['apv_3', 'apv_2']);
      expect((await storage.approvals.list({ userId: 'user_a', chatId: 'chat_1', state: 'denied', limit: 10, offset: 0 })).items.map((a) => a.id)).toEqual(['apv_1']);
    });

    it('decides a pending question once, tells how many of its group remain, and refuses another user', async () => {
      await storage.approvals.insert([approval('apv_1', 1), approval('apv_2', 2)]);
      expect(await storage.approvals.decide('user_b', 'apv_1', { state: 'approved', reason: null, content: null, decidedAt: at(9) })).toEqual({ outcome: 'not_found' });
      const first = await storage.approvals.decide('user_a', 'apv_1', { state: 'approved', reason: null, content: null, decidedAt: at(9) });
      expect(first).toEqual({ outcome: 'decided', record: { ...approval('apv_1', 1), state: 'approved', decidedAt: at(9) }, remaining: 1 });
      const again = await storage.approvals.decide('user_a', 'apv_1', { state: 'denied', reason: 'late', content: null, decidedAt: at(10) });
      expect(again).toEqual({ outcome: 'conflict', record: { ...approval('apv_1', 1), state: 'approved', decidedAt: at(9) } });
      const last = await storage.approvals.decide('user_a', 'apv_2', { state: 'accepted', reason: null, content: { name: 'Ada', n: 2 }, decidedAt: at(11) });
      expect(last).toMatchObject({ outcome: 'decided', remaining: 0, record: { state: 'accepted', content: { name: 'Ada', n: 2 } } });
    });

    it('lets exactly one of concurrent deciders of a group see nothing left pending', async () => {
      await storage.approvals.insert([1, 2, 3, 4].map((n) => approval(`apv_${n}`, n)));
      const outcomes = await Promise.all([1, 2, 3, 4].map((n) => storage.approvals.decide('user_a', `apv_${n}`, { state: 'approved', reason: null, content: null, decidedAt: at(9) })));
      expect(outcomes.map((o) => o.outcome)).toEqual(['decided', 'decided', 'decided', 'decided']);
      expect(outcomes.filter((o) => o.outcome === 'decided' && o.remaining === 0)).toHaveLength(1);
    });

    it('lets exactly one of concurrent claimers continue a decided group; a stale claim is taken again', async () => {
      await storage.approvals.insert([approval('apv_1', 1), approval('apv_2', 2)]);
      const claimOf = (by: string, now: number) => ({ by, at: at(now), staleBefore: at(now - 60) });
      // Something still pending: nothing to continue.
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r0', 100))).toMatchObject({ outcome: 'pending' });
      for (const id of ['apv_1', 'apv_2']) await storage.approvals.decide('user_a', id, { state: 'approved', reason: null, content: null, decidedAt: at(9) });
      const outcomes = await Promise.all([1, 2, 3, 4, 5].map((n) => storage.approvals.claim('user_a', 'grp_1', claimOf(`r${n}`, 100))));
      const won = outcomes.filter((o) => o.outcome === 'claimed');
      expect(won).toHaveLength(1);
      const winner = `r${outcomes.findIndex((o) => o.outcome === 'claimed') + 1}`;
      expect(outcomes.filter((o) => o.outcome === 'taken').map((o) => o.outcome === 'taken' && [o.by, o.at])).toEqual(new Array(4).fill([winner, at(100)]));
      // The winner reads the decisions it continues from.
      expect(won[0]?.records.map((r) => [r.id, r.state])).toEqual([
        ['apv_1', 'approved'],
        ['apv_2', 'approved'],
      ]);
      // Renewed, the claim holds past its first lease; a loser cannot renew it.
      expect(await storage.approvals.renew('user_a', 'grp_1', winner, at(150))).toBe(true);
      expect(await storage.approvals.renew('user_a', 'grp_1', 'r9', at(150))).toBe(false);
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r6', 200))).toMatchObject({ outcome: 'taken', by: winner, at: at(150) });
      // Not renewed (its holder died), it goes stale and the next claimer takes it; the old holder lost it.
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r7', 211))).toMatchObject({ outcome: 'claimed' });
      expect(await storage.approvals.renew('user_a', 'grp_1', winner, at(212))).toBe(false);
      // Released by its holder (a continuation that failed), it is free at once; another's release does nothing.
      await storage.approvals.release('user_a', 'grp_1', winner);
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r8', 212))).toMatchObject({ outcome: 'taken', by: 'r7' });
      await storage.approvals.release('user_a', 'grp_1', 'r7');
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r8', 212))).toMatchObject({ outcome: 'claimed' });
    });

    it('claims, renews and releases within transactions: a commit keeps them, a rollback undoes them', async () => {
      await storage.approvals.insert([approval('apv_1', 1), approval('apv_2', 2)]);
      for (const id of ['apv_1', 'apv_2']) await storage.approvals.decide('user_a', id, { state: 'approved', reason: null, content: null, decidedAt: at(9) });
      const claimOf = (by: string, now: number) => ({ by, at: at(now), staleBefore: at(now - 60) });
      // Claimed in a transaction that commits: held outside it.
      await storage.transaction(async (tx) => {
        expect(await tx.approvals.claim('user_a', 'grp_1', claimOf('r1', 100))).toMatchObject({ outcome: 'claimed' });
      });
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r2', 100))).toMatchObject({ outcome: 'taken', by: 'r1', at: at(100) });
      // Released and claimed again in a transaction that rolls back: r1 still holds it.
      const rolledBack = storage.transaction(async (tx) => {
        await tx.approvals.release('user_a', 'grp_1', 'r1');
        expect(await tx.approvals.claim('user_a', 'grp_1', claimOf('r3', 101))).toMatchObject({ outcome: 'claimed' });
        throw new Error('rolled back');
      });
      await expect(rolledBack).rejects.toThrow('rolled back');
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r4', 101))).toMatchObject({ outcome: 'taken', by: 'r1', at: at(100) });
      // A renewal that rolls back is undone: the claim goes stale from its last committed time.
      await expect(
        storage.transaction(async (tx) => {
          expect(await tx.approvals.renew('user_a', 'grp_1', 'r1', at(150))).toBe(true);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await storage.approvals.claim('user_a', 'grp_1', claimOf('r5', 161))).toMatchObject({ outcome: 'claimed' });
    });

    it('goes with its chat and with its project', async () => {
      await storage.approvals.insert([approval('apv_1', 1), approval('apv_2', 2, { chatId: 'chat_2' }), approval('apv_3', 3, { chatId: null })]);
      await storage.chats.delete('user_a', 'chat_1');
      expect(await storage.approvals.get('user_a', 'apv_1')).toBeUndefined();
      expect(await storage.approvals.get('user_a', 'apv_2')).toBeDefined();
      await storage.projects.delete('user_a', 'proj_000001');
      expect(await storage.approvals.get('user_a', 'apv_2')).toBeUndefined();
      expect(await storage.approvals.get('user_a', 'apv_3')).toBeUndefined();
    });
  });
}
