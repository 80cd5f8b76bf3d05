import { connect } from 'node:net';
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform } from '@agent-platform/core';
import { serve } from 'h3';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

// A client that closes its connection halfway through a request body used to be logged as a
// 500 "unhandled error" (a bug of the server) for what is the client's doing.
const lines: Record<string, unknown>[] = [];
let platform: AgentPlatform;
let key: string;
let port: number;
let close: () => Promise<void>;

beforeAll(async () => {
  platform = new AgentPlatform({ storage: memoryStorage() });
  key = (await platform.createUserWithKey({ name: 'aborts' })).key;
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const server = serve(createApp(platform, { logger }), { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
  await server.ready();
  const address = server.node?.server?.address();
  port = typeof address === 'object' && address ? address.port : 0;
  close = () => server.close(true);
});
afterAll(async () => {
  await close();
  await platform.close();
});

/** Sends the head of a POST that announces `announced` bytes, `sent` bytes of its body, then closes the socket. */
async function cutOff(path: string, contentType: string, announced: number, sent: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: ${contentType}\r\ncontent-length: ${announced}\r\n\r\n${sent}`);
  await new Promise((r) => setTimeout(r, 50));
  socket.destroy();
}

const requestLine = async (path: string) => {
  const deadline = Date.now() + 5000;
  for (;;) {
    const line = lines.find((l) => l.msg === 'request' && l.path === path);
    if (line || Date.now() > deadline) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('a request body cut off by the client', () => {
  it('is logged as the client error it is (400), never as an unhandled server error', async () => {
    await cutOff('/api/knowledge/documents', 'application/json', 100_000, '{"projectId":"proj_x","content":"abc');
    await cutOff('/api/knowledge/upload', 'multipart/form-data; boundary=XyZ', 100_000, '--XyZ\r\ncontent-disposition: form-data; name="files"; filename="a.txt"\r\n\r\nhello');
    for (const path of ['/api/knowledge/documents', '/api/knowledge/upload']) {
      expect((await requestLine(path))?.status).toBe(400);
    }
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
  });
});
