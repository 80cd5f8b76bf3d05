import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';

describe('AgentPlatform as a library', () => {
  it('closes its adapters through Symbol.asyncDispose (await using)', async () => {
    const storage = memoryStorage();
    let closed = 0;
    const close = storage.close.bind(storage);
    storage.close = async () => {
      closed++;
      await close();
    };
    const platform = new AgentPlatform({ storage });
    await platform[Symbol.asyncDispose]();
    expect(closed).toBe(1);
  });

  it('answers invalid input with a rejected promise, never a throw at the call', async () => {
    const platform = new AgentPlatform({ storage: memoryStorage() });
    const { key } = await platform.createUserWithKey({ name: 'owner' });
    const caller = await platform.authenticate(key);
    if (!caller) throw new Error('the new key did not authenticate');
    const bad = { nonsense: true } as never;
    const calls: (() => Promise<unknown>)[] = [
      () => platform.createProject(caller, bad),
      () => platform.chatCompletion(caller, bad, { form: 'v1' }),
      () => platform.createStream(caller, 'chat_x', bad),
      () => platform.createTool(caller, bad),
      () => platform.createChat(caller, bad),
      () => platform.searchKnowledge(caller, bad),
    ];
    for (const call of calls) {
      let promise: Promise<unknown> | undefined;
      expect(() => {
        promise = call();
      }).not.toThrow();
      await expect(promise).rejects.toMatchObject({ code: expect.any(String) });
    }
    await platform.close();
  });
});
