import { postgresNotifier, postgresStorage } from '@agent-platform/adapters-storage/postgres';
import { AgentPlatform, type ChatEvent, type ChatModel, type StreamEvent, type StreamRecord, storageStreamStore } from '@agent-platform/core';
import { postgresDatabase } from '@agent-platform/core/testing';
import { describe, expect, it } from 'vitest';

// Three instances (platforms in one process, each with its own storage connection and its own
// PostgreSQL notifier) on one PostgreSQL database, chat streams kept in the database: a stream
// written on A is followed on B and resumed on C.

/** A model that answers `count` tokens, one each time `step()` is called. */
function steppedModel(count: number) {
  const waiting: (() => void)[] = [];
  let steps = 0;
  const next = () =>
    new Promise<void>((resolve) => {
      if (steps > 0) {
        steps--;
        resolve();
      } else waiting.push(resolve);
    });
  const model: ChatModel = {
    provider: 'openai',
    async *stream(): AsyncIterable<ChatEvent> {
      for (let i = 0; i < count; i++) {
        await next();
        yield { type: 'text', delta: `t${i} ` };
      }
      yield { type: 'finish', reason: 'stop' };
    },
  };
  return {
    model,
    step(n = 1) {
      for (let i = 0; i < n; i++) {
        const w = waiting.shift();
        if (w) w();
        else steps++;
      }
    },
  };
}

async function collect(events: AsyncIterable<StreamEvent<StreamRecord>>, until?: (seen: number) => void) {
  const out: StreamEvent<StreamRecord>[] = [];
  for await (const e of events) {
    out.push(e);
    until?.(out.length);
  }
  return out;
}

const content = (events: StreamEvent<StreamRecord>[]) => events.map((e) => (e.data.type === 'chunk' ? (e.data.chunk.choices[0]?.delta.content ?? '') : '')).join('');

describe('chat streams in one PostgreSQL database across three instances', () => {
  it('a stream written on A is followed on B and resumed on C after an event id: no event lost or repeated', async () => {
    const url = await postgresDatabase();
    const tokens = 30;
    const { model, step } = steppedModel(tokens);
    const platforms: AgentPlatform[] = [];
    for (let i = 0; i < 3; i++) {
      const storage = await postgresStorage({ connectionString: url });
      const notifier = await postgresNotifier({ connectionString: url });
      platforms.push(
        new AgentPlatform({
          storage,
          notifier,
          // A long poll: followers must be woken by the notifier to finish in time.
          streamStore: storageStreamStore({ streams: storage.streams as NonNullable<typeof storage.streams>, notifier, pollMs: 60_000 }),
          agent: { models: () => model },
        }),
      );
    }
    const [a, b, c] = platforms as [AgentPlatform, AgentPlatform, AgentPlatform];
    try {
      const { userId } = await a.createUserWithKey({ name: 't' });
      const me = { userId };
      const { project } = await a.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
      const { chat } = await a.createChat(me, { projectId: project.id });
      const { stream } = await a.createStream(me, chat.id, { chatId: chat.id });
      // B follows from the start before anything is written.
      const followed = collect(await b.readStream(me, chat.id, stream.id, undefined));
      await a.chatCompletion(me, { model: project.id, messages: [{ role: 'user', content: 'hi' }], chatId: chat.id, streamId: stream.id, stream: true }, { form: 'v1' });
      step(10);
      // C reads what is there, stops after event 5 (a client that went away), then resumes after it.
      const stop = new AbortController();
      const first = await collect(await c.readStream(me, chat.id, stream.id, undefined, stop.signal), (seen) => seen === 5 && stop.abort());
      expect(first.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
      const resumed = collect(await c.readStream(me, chat.id, stream.id, '5'));
      step(tokens);
      const all = await followed;
      const rest = await resumed;
      const ids = all.map((e) => e.id);
      expect(ids).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
      expect(content(all)).toBe(Array.from({ length: tokens }, (_, i) => `t${i} `).join(''));
      expect(rest).toEqual(all.slice(5));
      expect([...first, ...rest]).toEqual(all);
    } finally {
      for (const p of platforms) await p.close();
    }
  });
});
