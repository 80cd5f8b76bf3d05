import { postgresDatabase } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, call, firstKeyOf, type Instance, startCluster, until } from './multi-instance-helpers.js';
import { parseResponseEvents } from './responses-helpers.js';

// Two built servers on one PostgreSQL database: a response created on A is read, continued and
// cancelled on B (the cancel reaches A, which runs it, through PostgreSQL's LISTEN/NOTIFY).

let cluster: Cluster;
let a: Instance;
let b: Instance;
let key = '';
let projectId = '';

beforeAll(async () => {
  cluster = await startCluster();
  const database = await postgresDatabase();
  const start = (name: string) => cluster.start(name, cluster.env(name, database, 'responses'));
  a = await start('a');
  key = firstKeyOf(a) as string;
  b = await start('b');
  projectId = (await call(a, key, 'POST', '/api/projects/create', { name: 'Shared', model: 'chat-model', provider: 'openai' })).body.project.id;
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

/** Opens a streamed response on `on` and answers the events read so far and the rest (when it ends). */
async function openStream(on: Instance, body: Record<string, unknown>) {
  const res = await fetch(`${on.url}/api/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const readUntil = async (needle: string) => {
    while (!text.includes(needle)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before ${needle}: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
  };
  return {
    readUntil,
    id: async () => {
      await readUntil('"response.created"');
      return /"id":"(resp_[a-z0-9]+)"/.exec(text)?.[1] as string;
    },
    rest: async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return parseResponseEvents(text);
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

describe('responses across instances (PostgreSQL)', () => {
  it('reads on B a response created on A, and continues it on B in the same chat', async () => {
    const created = await call(a, key, 'POST', '/api/v1/responses', { model: projectId, input: 'count 2' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: 'completed', output: [{ type: 'message', content: [{ text: 'w1 w2 ' }] }] });
    const read = await call(b, key, 'GET', `/api/v1/responses/${created.body.id}`);
    expect(read.body).toMatchObject({ id: created.body.id, status: 'completed', output: created.body.output, chatId: created.body.chatId });

    const next = await call(b, key, 'POST', '/api/v1/responses', { previous_response_id: created.body.id, input: 'count 1' });
    expect(next.body).toMatchObject({ status: 'completed', chatId: created.body.chatId, model: projectId, previous_response_id: created.body.id });
    expect(cluster.upstream.chats.at(-1)).toMatchObject({ instance: 'b', lastUser: 'count 1' });
    const messages = (await call(a, key, 'GET', `/api/chats/${created.body.chatId}/messages`)).body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.content)).toEqual(['count 2', 'w1 w2 ', 'count 1', 'w1 ']);
  });

  it('cancels on B a response streaming on A: A stops the run and its stream ends cancelled', async () => {
    const stream = await openStream(a, { model: projectId, input: 'hold' });
    const id = await stream.id();
    await stream.readUntil('response.output_text.delta');
    const cancelled = await call(b, key, 'POST', `/api/v1/responses/${id}/cancel`);
    expect(cancelled).toMatchObject({ status: 200, body: { id, status: 'cancelled' } });
    const events = await stream.rest();
    expect(events.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'cancelled' } });
    // A wrote what it had produced when it stopped; B reads it.
    const read = await until(
      'the run to stop on A',
      async () => {
        const r = await call(b, key, 'GET', `/api/v1/responses/${id}`);
        return r.body.output.length > 0 ? r.body : undefined;
      },
      10_000,
    );
    expect(read).toMatchObject({ status: 'cancelled', output: [{ type: 'message', status: 'incomplete' }] });
  });

  it('cancels on B a background response running on A', async () => {
    const queued = await call(a, key, 'POST', '/api/v1/responses', { model: projectId, input: 'hold', background: true });
    expect(queued.body).toMatchObject({ status: 'queued', background: true });
    const id = queued.body.id as string;
    await until('the response to run on A', async () => ((await call(b, key, 'GET', `/api/v1/responses/${id}`)).body.status === 'in_progress' ? true : undefined), 10_000);
    expect((await call(b, key, 'POST', `/api/v1/responses/${id}/cancel`)).body).toMatchObject({ id, status: 'cancelled' });
    const read = await until(
      'A to write what it had',
      async () => {
        const r = await call(a, key, 'GET', `/api/v1/responses/${id}`);
        return r.body.output.length > 0 ? r.body : undefined;
      },
      10_000,
    );
    expect(read).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
  });
});
