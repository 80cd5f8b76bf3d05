import { expect, it } from 'vitest';
import { startTestServer } from './helpers.js';

it('close() lets a request in flight finish, then closes the database', async () => {
  const s = await startTestServer();
  const body = JSON.stringify({ name: 'in flight', model: 'm', provider: 'openai' });
  let sendRest!: () => void;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
      sendRest = () => {
        controller.enqueue(new TextEncoder().encode(body.slice(10)));
        controller.close();
      };
    },
  });
  const pending = fetch(`${s.url}/api/projects/create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  await new Promise((r) => setTimeout(r, 100)); // the request is being read
  const closed = s.close();
  let closedYet = false;
  void closed.then(() => {
    closedYet = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  expect(closedYet).toBe(false);
  sendRest();
  const res = await pending;
  expect(res.status).toBe(201);
  await closed;
  // New connections are refused and the database is closed.
  await expect(fetch(`${s.url}/health`)).rejects.toThrow();
  await expect(s.platform.storage.users.get('x')).rejects.toThrow();
  await s.stop();
});
