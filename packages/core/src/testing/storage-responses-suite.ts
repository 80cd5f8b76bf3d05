import { beforeEach, describe, expect, it } from 'vitest';
import type { ResponseRecord, StorageAdapter } from '../storage/types.js';
import { at, project, type StorageUnderTest } from './storage-rows.js';

/** Stored responses: scoping by user, JSON kept as written, the status guard of updates, deletes and the project's cascade. */
export function describeResponses(suite: StorageUnderTest): void {
  describe('responses', () => {
    let storage: StorageAdapter;
    beforeEach(() => {
      storage = suite.current();
    });

    const response = (id: string, overrides: Partial<ResponseRecord> = {}): ResponseRecord => ({
      id,
      userId: 'user_a',
      projectId: 'proj_000001',
      chatId: 'chat_1',
      previousResponseId: null,
      status: 'in_progress',
      createdAt: at(1),
      updatedAt: at(1),
      resource: { id, object: 'response', status: 'in_progress', output: [], metadata: { k: 'v' }, usage: null },
      input: [{ type: 'message', id: 'msg_1', role: 'user', content: [{ type: 'input_text', text: 'Hello ✓' }] }],
      ...overrides,
    });

    it("keeps a response for its user only, with its resource and input as written; another user's id is not found", async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.responses.insert(response('resp_1'));
      await storage.responses.insert(response('resp_2', { projectId: null, chatId: null, previousResponseId: 'resp_1', status: 'completed' }));
      expect(await storage.responses.get('user_a', 'resp_1')).toEqual(response('resp_1'));
      expect(await storage.responses.get('user_a', 'resp_2')).toEqual(response('resp_2', { projectId: null, chatId: null, previousResponseId: 'resp_1', status: 'completed' }));
      expect(await storage.responses.get('user_b', 'resp_1')).toBeUndefined();
      await expect(storage.responses.insert(response('resp_1'))).rejects.toMatchObject({ code: 'conflict' });
    });

    it('updates only from the statuses named, so a finished or cancelled response is never overwritten', async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.responses.insert(response('resp_1'));
      const done = { status: 'completed' as const, resource: { id: 'resp_1', status: 'completed', output: [{ type: 'message' }] }, updatedAt: at(5) };
      expect(await storage.responses.update('user_b', 'resp_1', done, ['in_progress'])).toBe(false);
      expect(await storage.responses.update('user_a', 'resp_1', { ...done, status: 'cancelled' }, ['queued', 'in_progress'])).toBe(true);
      expect(await storage.responses.update('user_a', 'resp_1', done, ['queued', 'in_progress'])).toBe(false);
      expect(await storage.responses.update('user_a', 'resp_1', done, [])).toBe(false);
      expect(await storage.responses.get('user_a', 'resp_1')).toMatchObject({ status: 'cancelled', resource: done.resource, updatedAt: at(5) });
      expect(await storage.responses.update('user_a', 'resp_missing', done, ['in_progress'])).toBe(false);
    });

    it("deletes a response for its user, and a project's responses with the project", async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.responses.insert(response('resp_1'));
      await storage.responses.insert(response('resp_2'));
      await storage.responses.insert(response('resp_3', { projectId: null, chatId: null }));
      expect(await storage.responses.delete('user_b', 'resp_1')).toBe(false);
      expect(await storage.responses.delete('user_a', 'resp_1')).toBe(true);
      expect(await storage.responses.delete('user_a', 'resp_1')).toBe(false);
      await storage.projects.delete('user_a', 'proj_000001');
      expect(await storage.responses.get('user_a', 'resp_2')).toBeUndefined();
      expect(await storage.responses.get('user_a', 'resp_3')).toMatchObject({ id: 'resp_3' });
    });
  });
}
