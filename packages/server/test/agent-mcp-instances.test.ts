import { postgresNotifier, postgresStorage } from '@agent-platform/adapters-storage/postgres';
import { AgentPlatform, type ChatEvent, type ChatModel } from '@agent-platform/core';
import { postgresDatabase } from '@agent-platform/core/testing';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

// Two instances (platforms in one process, each with its own storage connection and its own
// PostgreSQL notifier) on one database: an MCP client's `ask` runs on A, its
// `notifications/cancelled` reaches B (each request of the streamable HTTP transport is its
// own), and A's run and its model call stop.

/** A model that starts answering, then waits until its call is aborted; records the abort. */
function heldModel() {
  const state = { called: 0, aborted: 0 };
  const model: ChatModel = {
    provider: 'openai',
    async *stream(request): AsyncIterable<ChatEvent> {
      state.called++;
      yield { type: 'text', delta: 'Let me think' };
      await new Promise<void>((resolve) => {
        if (request.signal?.aborted) resolve();
        request.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      state.aborted++;
      throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    },
  };
  return { model, state };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a project's MCP server on two instances of one PostgreSQL database", () => {
  it('a call running on A is cancelled by a notifications/cancelled sent to B', async () => {
    const url = await postgresDatabase();
    const { model, state } = heldModel();
    const platforms: AgentPlatform[] = [];
    for (let i = 0; i < 2; i++) {
      platforms.push(new AgentPlatform({ storage: await postgresStorage({ connectionString: url }), notifier: await postgresNotifier({ connectionString: url }), agent: { models: () => model } }));
    }
    const [a, b] = platforms as [AgentPlatform, AgentPlatform];
    try {
      const { userId, key } = await a.createUserWithKey({ name: 't' });
      const { project } = await a.createProject({ userId }, { name: 'p', model: 'm', provider: 'openai' });
      const post = (platform: AgentPlatform, message: unknown) =>
        createApp(platform).request(`/api/v1/projects/${project.id}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'mcps_one' },
          body: JSON.stringify(message),
        });
      const running = await post(a, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'ask', arguments: { question: 'think hard' }, _meta: { progressToken: 'p' } } });
      const reader = (running.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      for (let i = 0; i < 200 && state.called === 0; i++) await sleep(25);
      expect(state.called).toBe(1);
      expect((await post(b, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4, reason: 'enough' } })).status).toBe(202);
      for (let i = 0; i < 200 && state.aborted === 0; i++) await sleep(25);
      expect(state.aborted).toBe(1);
      await reader.cancel();
    } finally {
      for (const p of platforms) await p.close();
    }
  });
});
