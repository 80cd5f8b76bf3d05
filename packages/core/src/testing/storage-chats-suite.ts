import { beforeEach, describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../storage/types.js';
import { at, project, type StorageUnderTest } from './storage-rows.js';

/**
 * Credentials (the one default per user and provider), the projects naming them, and chats with
 * their messages and sources, keyed by user and id.
 */
export function describeCredentialsAndChats(suite: StorageUnderTest): void {
  describe('credentials and chats', () => {
    let storage: StorageAdapter;
    beforeEach(() => {
      storage = suite.current();
    });

    const credential = (id: string, userId: string, s: number) => ({
      id,
      userId,
      name: `cred ${id}`,
      provider: 'openai',
      secret: `v1:sealed-${id}`,
      last4: 'abcd',
      fields: null,
      baseUrl: null,
      baseUrlSecret: null,
      proxy: false,
      isValid: null,
      isDefault: false as boolean | 'if-none',
      createdAt: at(s),
      updatedAt: at(s),
    });

    it('stores credentials per user, newest first, with partial updates', async () => {
      await storage.credentials.insert(credential('cred_1', 'user_a', 1));
      await storage.credentials.insert({ ...credential('cred_2', 'user_a', 2), baseUrl: 'http://127.0.0.1:1/v1?key=****', baseUrlSecret: 'v1:sealed-url', proxy: true, isValid: true });
      await storage.credentials.insert(credential('cred_3', 'user_b', 3));
      expect((await storage.credentials.list('user_a')).map((c) => c.id)).toEqual(['cred_2', 'cred_1']);
      expect(await storage.credentials.get('user_a', 'cred_2')).toMatchObject({ baseUrl: 'http://127.0.0.1:1/v1?key=****', baseUrlSecret: 'v1:sealed-url', proxy: true, isValid: true });
      expect(await storage.credentials.get('user_b', 'cred_1')).toBeUndefined();
      const updated = await storage.credentials.update('user_a', 'cred_1', { isValid: false, name: 'renamed', updatedAt: at(9) });
      expect(updated).toEqual({ ...credential('cred_1', 'user_a', 1), isValid: false, name: 'renamed', updatedAt: at(9) });
      // The address: replaced (masked and sealed), then cleared.
      const moved = await storage.credentials.update('user_a', 'cred_2', { baseUrl: 'http://127.0.0.1:2/v1', baseUrlSecret: null, updatedAt: at(9) });
      expect(moved).toMatchObject({ baseUrl: 'http://127.0.0.1:2/v1', baseUrlSecret: null, proxy: true });
      expect(await storage.credentials.update('user_a', 'cred_2', { baseUrl: null, updatedAt: at(10) })).toMatchObject({ baseUrl: null, baseUrlSecret: null });
      expect(await storage.credentials.get('user_a', 'cred_2')).toMatchObject({ baseUrl: null, baseUrlSecret: null, updatedAt: at(10) });
      expect(await storage.credentials.update('user_b', 'cred_1', { name: 'x', updatedAt: at(9) })).toBeUndefined();
      expect(await storage.credentials.delete('user_b', 'cred_1')).toBe(false);
      expect(await storage.credentials.delete('user_a', 'cred_1')).toBe(true);
      expect(await storage.credentials.get('user_a', 'cred_1')).toBeUndefined();
    });

    it("keeps a credential's shown provider fields and a project's provider options, replaced and cleared by updates", async () => {
      const fields = { values: { region: 'us-east-1', deployments: { 'gpt-4o': 'prod-4o' } }, last4: { secretAccessKey: 'wxyz' } };
      await storage.credentials.insert({ ...credential('cred_f', 'user_a', 1), provider: 'bedrock', fields });
      expect(await storage.credentials.get('user_a', 'cred_f')).toMatchObject({ fields, secret: 'v1:sealed-cred_f' });
      const next = { values: { region: 'eu-west-1' }, last4: { secretAccessKey: 'abcd' } };
      expect(await storage.credentials.update('user_a', 'cred_f', { fields: next, secret: 'v1:resealed', updatedAt: at(9) })).toMatchObject({ fields: next, secret: 'v1:resealed' });
      expect((await storage.credentials.get('user_a', 'cred_f'))?.fields).toEqual(next);
      const options = { thinking: { type: 'enabled', budgetTokens: 2048 }, cacheControl: { type: 'ephemeral' } };
      await storage.projects.insert(project('user_a', 5, { providerOptions: options }));
      expect((await storage.projects.get('user_a', 'proj_000005'))?.providerOptions).toEqual(options);
      expect((await storage.projects.update('user_a', 'proj_000005', { providerOptions: { sendReasoning: false }, updatedAt: at(9) }))?.providerOptions).toEqual({ sendReasoning: false });
      expect((await storage.projects.update('user_a', 'proj_000005', { providerOptions: null, updatedAt: at(10) }))?.providerOptions).toBeNull();
      expect((await storage.projects.update('user_a', 'proj_000005', { name: 'kept', updatedAt: at(11) }))?.providerOptions).toBeNull();
    });

    it('keeps at most one default per user and provider: the first one, or the one made so', async () => {
      const add = async (id: string, userId: string, s: number, isDefault: boolean | 'if-none', provider = 'openai') =>
        (await storage.credentials.insert({ ...credential(id, userId, s), provider, isDefault })).isDefault;
      const defaults = async (userId: string) => (await storage.credentials.list(userId)).filter((c) => c.isDefault).map((c) => `${c.provider}:${c.id}`);
      // The first credential of a provider becomes its default; the next ones do not.
      expect(await add('cred_1', 'user_a', 1, 'if-none')).toBe(true);
      expect(await add('cred_2', 'user_a', 2, 'if-none')).toBe(false);
      // Per provider and per user.
      expect(await add('cred_3', 'user_a', 3, 'if-none', 'ollama')).toBe(true);
      expect(await add('cred_4', 'user_b', 4, 'if-none')).toBe(true);
      expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_1']);
      // true takes the default over; false never takes it.
      expect(await add('cred_5', 'user_a', 5, true)).toBe(true);
      expect(await add('cred_6', 'user_a', 6, false)).toBe(false);
      expect(await defaults('user_a')).toEqual(['openai:cred_5', 'ollama:cred_3']);
      expect((await storage.credentials.defaultOf('user_a', 'openai'))?.id).toBe('cred_5');
      expect((await storage.credentials.defaultOf('user_b', 'openai'))?.id).toBe('cred_4');
      expect(await storage.credentials.defaultOf('user_a', 'anthropic')).toBeUndefined();

      // An update moves it; another user's id changes nothing.
      expect(await storage.credentials.update('user_a', 'cred_2', { isDefault: true, updatedAt: at(9) })).toMatchObject({ id: 'cred_2', isDefault: true });
      expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_2']);
      expect(await storage.credentials.update('user_b', 'cred_1', { isDefault: true, updatedAt: at(9) })).toBeUndefined();
      expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_2']);
      expect(await defaults('user_b')).toEqual(['openai:cred_4']);
      // Making the default the default again keeps it.
      expect(await storage.credentials.update('user_a', 'cred_2', { isDefault: true, updatedAt: at(9) })).toMatchObject({ isDefault: true });
      expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_2']);

      // false leaves the provider without one; the next credential saved then becomes it.
      expect(await storage.credentials.update('user_a', 'cred_2', { isDefault: false, updatedAt: at(9) })).toMatchObject({ isDefault: false });
      expect(await storage.credentials.defaultOf('user_a', 'openai')).toBeUndefined();
      expect(await add('cred_7', 'user_a', 7, 'if-none')).toBe(true);
      // Deleting the default leaves none (nothing is promoted in its place).
      expect(await storage.credentials.delete('user_a', 'cred_7')).toBe(true);
      expect(await storage.credentials.defaultOf('user_a', 'openai')).toBeUndefined();
      expect(await defaults('user_a')).toEqual(['ollama:cred_3']);
      // It survives a reopen, as every column does.
      if (suite.reopen) {
        storage = await suite.reopen();
        expect(await defaults('user_a')).toEqual(['ollama:cred_3']);
        expect((await storage.credentials.get('user_b', 'cred_4'))?.isDefault).toBe(true);
      }
    });

    it('finds the projects of a provider that name no credential (those that use its default)', async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.projects.insert(project('user_a', 2, { credentialId: 'cred_1' }));
      await storage.projects.insert(project('user_a', 3, { provider: 'ollama' }));
      await storage.projects.insert(project('user_a', 4));
      await storage.projects.insert(project('user_b', 5));
      expect(await storage.projects.namingNoCredential('user_a', 'openai')).toEqual(['proj_000001', 'proj_000004']);
      expect(await storage.projects.namingNoCredential('user_a', 'ollama')).toEqual(['proj_000003']);
      expect(await storage.projects.namingNoCredential('user_b', 'openai')).toEqual(['proj_000005']);
      expect(await storage.projects.namingNoCredential('user_b', 'ollama')).toEqual([]);
    });

    it("stores a project's credentialId, changes and clears it, and finds the projects naming a credential", async () => {
      await storage.credentials.insert(credential('cred_1', 'user_a', 1));
      await storage.projects.insert(project('user_a', 1, { credentialId: 'cred_1' }));
      await storage.projects.insert(project('user_a', 2));
      await storage.projects.insert(project('user_a', 3, { credentialId: 'cred_1' }));
      await storage.projects.insert(project('user_b', 4, { credentialId: 'cred_1' }));
      expect(await storage.projects.get('user_a', 'proj_000001')).toMatchObject({ credentialId: 'cred_1' });
      expect(await storage.projects.get('user_a', 'proj_000002')).toMatchObject({ credentialId: null });
      expect((await storage.projects.list({ userId: 'user_a', limit: 10 })).items.map((p) => p.credentialId)).toEqual(['cred_1', null, 'cred_1']);
      expect(await storage.projects.usingCredential('user_a', 'cred_1')).toEqual(['proj_000001', 'proj_000003']);
      expect(await storage.projects.usingCredential('user_b', 'cred_1')).toEqual(['proj_000004']);
      // A patch without credentialId keeps it; null clears it.
      expect(await storage.projects.update('user_a', 'proj_000001', { name: 'renamed', updatedAt: at(9) })).toMatchObject({ credentialId: 'cred_1' });
      expect(await storage.projects.update('user_a', 'proj_000001', { credentialId: null, updatedAt: at(9) })).toMatchObject({ credentialId: null });
      expect(await storage.projects.update('user_a', 'proj_000002', { credentialId: 'cred_1', updatedAt: at(9) })).toMatchObject({ credentialId: 'cred_1' });
      expect(await storage.projects.usingCredential('user_a', 'cred_1')).toEqual(['proj_000002', 'proj_000003']);
      expect(await storage.projects.usingCredential('user_a', 'cred_missing')).toEqual([]);
    });

    it('stores chats with ordered messages, lists them per user, and deletes them with their project', async () => {
      await storage.projects.insert(project('user_a', 1));
      const chat = { id: 'chat_1', userId: 'user_a', projectId: 'proj_000001', name: 'Support', createdAt: at(1), updatedAt: at(1) };
      await storage.chats.insert(chat);
      await storage.chats.insert({ ...chat, id: 'chat_2', createdAt: at(2), updatedAt: at(2) });
      expect(await storage.chats.get('user_a', 'chat_1')).toEqual(chat);
      expect(await storage.chats.get('user_b', 'chat_1')).toBeUndefined();
      const page = await storage.chats.list({ userId: 'user_a', limit: 1, offset: 0 });
      expect(page.items.map((c) => c.id)).toEqual(['chat_2']);
      expect(page.total).toBe(2);
      // One project's chats: its page and its total.
      await storage.projects.insert(project('user_a', 2));
      await storage.chats.insert({ ...chat, id: 'chat_3', projectId: 'proj_000002', createdAt: at(3), updatedAt: at(3) });
      const ofFirst = await storage.chats.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 });
      expect([ofFirst.items.map((c) => c.id), ofFirst.total]).toEqual([['chat_2', 'chat_1'], 2]);
      const ofSecond = await storage.chats.list({ userId: 'user_a', projectId: 'proj_000002', limit: 10, offset: 0 });
      expect([ofSecond.items.map((c) => c.id), ofSecond.total]).toEqual([['chat_3'], 1]);
      expect((await storage.chats.list({ userId: 'user_b', projectId: 'proj_000002', limit: 10, offset: 0 })).total).toBe(0);
      await storage.chats.delete('user_a', 'chat_3');
      await storage.chats.appendMessages('user_a', 'chat_1', [
        { role: 'user', content: 'hi', toolCalls: null, toolCallId: null, createdAt: at(3) },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":1}' }], toolCallId: null, createdAt: at(3) },
      ]);
      await storage.chats.appendMessages('user_a', 'chat_1', [{ role: 'tool', content: '42', toolCalls: null, toolCallId: 'call_1', createdAt: at(4) }]);
      const messages = await storage.chats.messages('user_a', 'chat_1');
      expect(messages.map((m) => [m.position, m.role])).toEqual([
        [0, 'user'],
        [1, 'assistant'],
        [2, 'tool'],
      ]);
      expect(messages[1]?.toolCalls).toEqual([{ id: 'call_1', name: 'lookup', arguments: '{"q":1}' }]);
      expect(messages[2]).toMatchObject({ chatId: 'chat_1', toolCallId: 'call_1', content: '42', createdAt: at(4) });
      // Renamed by its user only; the other user's call changes nothing.
      expect(await storage.chats.update('user_b', 'chat_1', { name: 'Stolen', updatedAt: at(5) })).toBeUndefined();
      expect(await storage.chats.update('user_a', 'chat_1', { name: 'Refunds', updatedAt: at(5) })).toEqual({ ...chat, name: 'Refunds', updatedAt: at(5) });
      expect(await storage.chats.get('user_a', 'chat_1')).toEqual({ ...chat, name: 'Refunds', updatedAt: at(5) });
      expect(await storage.chats.update('user_a', 'chat_missing', { name: 'x', updatedAt: at(5) })).toBeUndefined();
      await storage.chats.touch('user_a', 'chat_1', at(10));
      expect((await storage.chats.get('user_a', 'chat_1'))?.updatedAt).toEqual(at(10));
      expect(await storage.chats.delete('user_b', 'chat_1')).toBe(false);
      expect(await storage.chats.delete('user_a', 'chat_1')).toBe(true);
      expect(await storage.chats.messages('user_a', 'chat_1')).toEqual([]);
      await storage.projects.delete('user_a', 'proj_000001');
      expect(await storage.chats.get('user_a', 'chat_2')).toBeUndefined();
    });

    it("keys chats by user and id: another user's chat of the same id is a separate chat, the user's own duplicate a conflict", async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.projects.insert(project('user_b', 2));
      const mine = { id: 'shared-id', userId: 'user_a', projectId: 'proj_000001', name: 'A', createdAt: at(1), updatedAt: at(1) };
      const theirs = { ...mine, userId: 'user_b', projectId: 'proj_000002', name: 'B', createdAt: at(2), updatedAt: at(2) };
      await storage.chats.insert(mine);
      await storage.chats.insert(theirs);
      await expect(storage.chats.insert({ ...mine, name: 'again' })).rejects.toMatchObject({ code: 'conflict' });
      expect(await storage.chats.get('user_a', 'shared-id')).toEqual(mine);
      expect(await storage.chats.get('user_b', 'shared-id')).toEqual(theirs);
      const say = (content: string) => ({ role: 'user' as const, content, toolCalls: null, toolCallId: null, createdAt: at(3) });
      await storage.chats.appendMessages('user_a', 'shared-id', [say('a0'), say('a1')]);
      await storage.chats.appendMessages('user_b', 'shared-id', [say('b0')]);
      expect((await storage.chats.messages('user_a', 'shared-id')).map((m) => [m.position, m.content])).toEqual([
        [0, 'a0'],
        [1, 'a1'],
      ]);
      expect((await storage.chats.messages('user_b', 'shared-id')).map((m) => [m.position, m.content])).toEqual([[0, 'b0']]);
      await expect(storage.chats.appendMessages('user_a', 'chat_missing', [say('x')])).rejects.toThrow();
      // Each call reaches its user's chat only.
      await storage.chats.touch('user_b', 'shared-id', at(9));
      expect((await storage.chats.get('user_a', 'shared-id'))?.updatedAt).toEqual(at(1));
      expect(await storage.chats.update('user_b', 'shared-id', { name: 'B2', updatedAt: at(10) })).toMatchObject({ name: 'B2', userId: 'user_b' });
      expect((await storage.chats.get('user_a', 'shared-id'))?.name).toBe('A');
      expect(await storage.chats.delete('user_b', 'shared-id')).toBe(true);
      expect(await storage.chats.get('user_b', 'shared-id')).toBeUndefined();
      expect(await storage.chats.messages('user_b', 'shared-id')).toEqual([]);
      expect(await storage.chats.get('user_a', 'shared-id')).toEqual(mine);
      expect(await storage.chats.messages('user_a', 'shared-id')).toHaveLength(2);
      // Made again after its deletion, it starts empty.
      await storage.chats.insert(theirs);
      expect(await storage.chats.messages('user_b', 'shared-id')).toEqual([]);
      // A project's deletion takes its user's chats only.
      await storage.projects.delete('user_b', 'proj_000002');
      expect(await storage.chats.get('user_b', 'shared-id')).toBeUndefined();
      expect(await storage.chats.messages('user_a', 'shared-id')).toHaveLength(2);
    });

    it("keeps an answer's sources with its message, in order, and none for messages given none or an empty list", async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.chats.insert({ id: 'chat_s', userId: 'user_a', projectId: 'proj_000001', name: 'Sources', createdAt: at(1), updatedAt: at(1) });
      const sources = [
        { index: 1, chunkId: 'chunk_b', documentId: 'doc_2', fileName: 'refunds — policy.md', score: 0.8125, excerpt: 'Refunds are given within 30 days of delivery, “no questions asked”…' },
        { index: 2, chunkId: 'chunk_a', documentId: 'doc_1', fileName: 'shipping.md', score: 0.25, excerpt: '' },
      ];
      const input = sources.map((s) => ({ ...s }));
      await storage.chats.appendMessages('user_a', 'chat_s', [
        { role: 'user', content: 'refunds?', toolCalls: null, toolCallId: null, createdAt: at(2) },
        { role: 'assistant', content: 'Within 30 days [1].', toolCalls: null, toolCallId: null, sources: input, createdAt: at(2) },
        { role: 'assistant', content: 'And nothing else.', toolCalls: null, toolCallId: null, sources: [], createdAt: at(3) },
      ]);
      input[0] = { ...sources[1], index: 9 } as (typeof input)[number];
      const messages = await storage.chats.messages('user_a', 'chat_s');
      expect(messages.map((m) => m.sources)).toEqual([undefined, sources, undefined]);
      expect(messages[1]).toEqual({ chatId: 'chat_s', position: 1, role: 'assistant', content: 'Within 30 days [1].', toolCalls: null, toolCallId: null, sources, createdAt: at(2) });
      (messages[1]?.sources as unknown as { index: number }[])[0] = { index: 7 };
      expect((await storage.chats.messages('user_a', 'chat_s'))[1]?.sources).toEqual(sources);
    });

    it("keeps an assistant message's provider, its reasoning blocks with the provider's data, and its calls' metadata, as given", async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.chats.insert({ id: 'chat_r', userId: 'user_a', projectId: 'proj_000001', name: 'Reasoning', createdAt: at(1), updatedAt: at(1) });
      const reasoning = [
        { text: 'I need the weather — «first».', metadata: { anthropic: { signature: 'c2lnbmF0dXJl+/==' } } },
        { text: '', metadata: { anthropic: { redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4a' } } },
        { text: 'No data here.' },
      ];
      const toolCalls = [
        { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', metadata: { google: { thoughtSignature: 'Cv4BAb4+9vs=' } } },
        { id: 'call_2', name: 'get_time', arguments: '{}' },
      ];
      await storage.chats.appendMessages('user_a', 'chat_r', [
        { role: 'user', content: 'weather?', toolCalls: null, toolCallId: null, createdAt: at(2) },
        { role: 'assistant', content: null, toolCalls, toolCallId: null, provider: 'anthropic', reasoning, createdAt: at(2) },
        { role: 'assistant', content: 'Sunny.', toolCalls: null, toolCallId: null, provider: 'google', reasoning: [], createdAt: at(3) },
      ]);
      const messages = await storage.chats.messages('user_a', 'chat_r');
      expect(messages[1]).toEqual({ chatId: 'chat_r', position: 1, role: 'assistant', content: null, toolCalls, toolCallId: null, provider: 'anthropic', reasoning, createdAt: at(2) });
      expect(messages[2]).toEqual({ chatId: 'chat_r', position: 2, role: 'assistant', content: 'Sunny.', toolCalls: null, toolCallId: null, provider: 'google', createdAt: at(3) });
      expect((await storage.chats.recentMessages('user_a', 'chat_r', { limit: 2 }))[1]).toMatchObject({ provider: 'anthropic', reasoning, toolCalls });
    });

    it("keeps a user message's parts (text and image references) and finds the image references of a chat or a project, each chat's once", async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.projects.insert(project('user_a', 2));
      await storage.projects.insert(project('user_b', 3));
      const chat = (id: string, userId: string, projectId: string) => storage.chats.insert({ id, userId, projectId, name: id, createdAt: at(1), updatedAt: at(1) });
      await chat('chat_1', 'user_a', 'proj_000001');
      await chat('chat_2', 'user_a', 'proj_000001');
      await chat('chat_3', 'user_a', 'proj_000002');
      await chat('chat_1', 'user_b', 'proj_000003');
      const image = (ref: string) => ({ type: 'image' as const, ref, mediaType: 'image/png', bytes: 67 });
      const parts = [{ type: 'text' as const, text: 'What is this?' }, image('a'.repeat(64))];
      const user = (content: string, p?: typeof parts) => ({ role: 'user' as const, content, toolCalls: null, toolCallId: null, ...(p ? { parts: p } : {}), createdAt: at(2) });
      await storage.chats.appendMessages('user_a', 'chat_1', [user('What is this?', parts), user('plain'), user('again', [image('a'.repeat(64)), image('b'.repeat(64))])]);
      await storage.chats.appendMessages('user_a', 'chat_2', [user('x', [image('c'.repeat(64))])]);
      await storage.chats.appendMessages('user_a', 'chat_3', [user('y', [image('d'.repeat(64))])]);
      await storage.chats.appendMessages('user_b', 'chat_1', [user('z', [image('e'.repeat(64))])]);
      const messages = await storage.chats.messages('user_a', 'chat_1');
      expect(messages[0]).toEqual({ chatId: 'chat_1', position: 0, role: 'user', content: 'What is this?', toolCalls: null, toolCallId: null, parts, createdAt: at(2) });
      expect(messages[1]).not.toHaveProperty('parts');
      expect((await storage.chats.recentMessages('user_a', 'chat_1', { limit: 1 }))[0]?.parts).toHaveLength(2);
      const sorted = (refs: { chatId: string; ref: string }[]) => refs.map((r) => `${r.chatId}:${r.ref[0]}`).sort();
      expect(sorted(await storage.chats.imageRefs('user_a', { chatId: 'chat_1' }))).toEqual(['chat_1:a', 'chat_1:b']);
      expect(sorted(await storage.chats.imageRefs('user_a', { projectId: 'proj_000001' }))).toEqual(['chat_1:a', 'chat_1:b', 'chat_2:c']);
      expect(sorted(await storage.chats.imageRefs('user_b', { chatId: 'chat_1' }))).toEqual(['chat_1:e']);
      expect(await storage.chats.imageRefs('user_b', { projectId: 'proj_000001' })).toEqual([]);
      expect(await storage.chats.imageRefs('user_a', { chatId: 'chat_none' })).toEqual([]);
    });
  });
}
