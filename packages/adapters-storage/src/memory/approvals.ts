import type { ApprovalRecord, ApprovalRepository } from '@agent-platform/core';
import { approvalGroupKey, clone, compareNewestFirst, insertUnique, type Tables } from './tables.js';

/** Pending questions of runs in memory (one process: decisions are serial by nature). */
export function memoryApprovals(tables: () => Tables): ApprovalRepository {
  const ofGroup = (userId: string, groupId: string): ApprovalRecord[] =>
    [...tables().approvals.values()].filter((a) => a.userId === userId && a.groupId === groupId).sort((a, b) => compareNewestFirst(b, a));
  return {
    async insert(records) {
      const t = tables();
      for (const r of records) if (t.projects.get(r.projectId)?.userId !== r.userId) throw new Error(`Project ${r.projectId} does not exist`);
      for (const r of records) insertUnique(t.approvals, r.id, clone(r), 'Approval');
    },
    async get(userId, id) {
      const found = tables().approvals.get(id);
      return found?.userId === userId ? clone(found) : undefined;
    },
    async list(query) {
      const matching = [...tables().approvals.values()]
        .filter((a) => a.userId === query.userId && (query.chatId === undefined || a.chatId === query.chatId) && (query.state === undefined || a.state === query.state))
        .sort(compareNewestFirst);
      return { items: matching.slice(query.offset, query.offset + query.limit).map(clone), total: matching.length, start: query.offset };
    },
    async group(userId, groupId) {
      return ofGroup(userId, groupId).map(clone);
    },
    async decide(userId, id, decision) {
      const t = tables();
      const found = t.approvals.get(id);
      if (found?.userId !== userId) return { outcome: 'not_found' };
      if (found.state !== 'pending') return { outcome: 'conflict', record: clone(found) };
      const decided: ApprovalRecord = { ...found, state: decision.state, reason: decision.reason, content: decision.content, decidedAt: decision.decidedAt };
      t.approvals.set(id, clone(decided));
      return { outcome: 'decided', record: clone(decided), remaining: ofGroup(userId, found.groupId).filter((a) => a.state === 'pending').length };
    },
    async claim(userId, groupId, claim) {
      const records = ofGroup(userId, groupId).map(clone);
      if (records.some((r) => r.state === 'pending')) return { outcome: 'pending', records };
      const claims = tables().approvalClaims;
      const key = approvalGroupKey(userId, groupId);
      const held = claims.get(key);
      if (held && held.at.getTime() >= claim.staleBefore.getTime()) return { outcome: 'taken', by: held.by, at: new Date(held.at), records };
      claims.set(key, { by: claim.by, at: new Date(claim.at) });
      return { outcome: 'claimed', records };
    },
    async renew(userId, groupId, by, at) {
      const claims = tables().approvalClaims;
      const key = approvalGroupKey(userId, groupId);
      if (claims.get(key)?.by !== by) return false;
      claims.set(key, { by, at: new Date(at) });
      return true;
    },
    async release(userId, groupId, by) {
      const claims = tables().approvalClaims;
      const key = approvalGroupKey(userId, groupId);
      if (claims.get(key)?.by === by) claims.delete(key);
    },
  };
}
