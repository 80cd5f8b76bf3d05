import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatModel, ChatRequest } from '../src/agent/chat-model.js';
import { type AgentEvent, runAgentTurn, systemContext } from '../src/agent/loop.js';
import type { AgentTool } from '../src/agent/tools.js';

/** A model that answers from a script, one reply per call, and records what it was sent. */
function scriptedModel(replies: ChatEvent[][]): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    provider: 'test',
    requests,
    async *stream(request) {
      requests.push(request);
      const reply = replies.shift();
      if (!reply) throw new Error('no scripted reply left');
      for (const event of reply) yield event;
    },
  };
}

const usage = (n: number) => ({ promptTokens: n, completionTokens: 1, totalTokens: n + 1 });

const weather: AgentTool = {
  definition: { name: 'weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  async run(args) {
    return `Sunny in ${(args as { city: string }).city}`;
  },
};

async function collect(events: AsyncIterable<AgentEvent>) {
  const out: AgentEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('runAgentTurn', () => {
  it('streams text and finishes with the answer as the new message', async () => {
    const model = scriptedModel([[{ type: 'text', delta: 'Hel' }, { type: 'text', delta: 'lo' }, { type: 'finish', reason: 'stop', usage: usage(5) }]]);
    const events = await collect(
      runAgentTurn({ model, modelName: 'm', system: 'Be brief.', history: [{ role: 'user', content: 'before' }], input: [{ role: 'user', content: 'hi' }], tools: [] }),
    );
    expect(events.map((e) => e.type)).toEqual(['text', 'text', 'finish']);
    expect(events.at(-1)).toMatchObject({ reason: 'stop', usage: usage(5), messages: [{ role: 'assistant', content: 'Hello' }] });
    expect(model.requests[0]?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'before' },
      { role: 'user', content: 'hi' },
    ]);
    expect(model.requests[0]?.tools).toBeUndefined();
  });

  it('gives the model an error naming the limit for arguments nested too deep, without running the tool', async () => {
    let ran = 0;
    const anyTool: AgentTool = { definition: { name: 'echo', description: '', parameters: { type: 'object' } }, run: async (args) => `${++ran}${JSON.stringify(args)}` };
    const deep = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const model = scriptedModel([
      [{ type: 'tool_call', call: { id: 'c1', name: 'echo', arguments: deep } }, { type: 'finish', reason: 'tool_calls', usage: usage(1) }],
      [{ type: 'text', delta: 'ok' }, { type: 'finish', reason: 'stop', usage: usage(1) }],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [anyTool] }));
    expect(events[1]).toMatchObject({ type: 'tool_result', isError: true, content: 'Error: arguments: nested deeper than 64 levels' });
    expect(ran).toBe(0);
  });

  it('runs tool calls, feeds the results back, and sums usage over the calls', async () => {
    const model = scriptedModel([
      [{ type: 'tool_call', call: { id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' } }, { type: 'finish', reason: 'tool_calls', usage: usage(10) }],
      [{ type: 'text', delta: 'It is sunny.' }, { type: 'finish', reason: 'stop', usage: usage(20) }],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'weather?' }], tools: [weather] }));
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'tool_result', 'text', 'finish']);
    expect(events[1]).toMatchObject({ content: 'Sunny in Oslo', isError: false });
    const finish = events.at(-1) as Extract<AgentEvent, { type: 'finish' }>;
    expect(finish.usage).toEqual({ promptTokens: 30, completionTokens: 2, totalTokens: 32 });
    expect(finish.messages).toEqual([
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'Sunny in Oslo' },
      { role: 'assistant', content: 'It is sunny.' },
    ]);
    expect(model.requests[0]?.tools?.map((t) => t.name)).toEqual(['weather']);
    expect(model.requests[1]?.messages.slice(-2)).toEqual(finish.messages.slice(0, 2));
  });

  it('reports unknown tools, bad arguments and failing tools to the model as errors', async () => {
    const failing: AgentTool = { definition: { name: 'boom', description: '', parameters: {} }, run: async () => Promise.reject(new Error('it broke')) };
    const model = scriptedModel([
      [
        { type: 'tool_call', call: { id: 'a', name: 'nope', arguments: '{}' } },
        { type: 'tool_call', call: { id: 'b', name: 'weather', arguments: '{not json' } },
        { type: 'tool_call', call: { id: 'c', name: 'boom', arguments: '' } },
        { type: 'finish', reason: 'tool_calls' },
      ],
      [{ type: 'text', delta: 'Sorry.' }, { type: 'finish', reason: 'stop' }],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather, failing] }));
    const results = events.filter((e) => e.type === 'tool_result') as Extract<AgentEvent, { type: 'tool_result' }>[];
    expect(results.map((r) => r.isError)).toEqual([true, true, true]);
    expect(results[0]?.content).toMatch(/no tool named nope/);
    expect(results[1]?.content).toMatch(/^Error: .*JSON/);
    expect(results[2]?.content).toBe('Error: it broke');
  });

  it('stops offering tools at the step limit, so the last call answers', async () => {
    const call = (id: string): ChatEvent[] => [{ type: 'tool_call', call: { id, name: 'weather', arguments: '{"city":"X"}' } }, { type: 'finish', reason: 'tool_calls' }];
    const model = scriptedModel([call('1'), call('2'), [{ type: 'text', delta: 'done' }, { type: 'finish', reason: 'stop' }]]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather], stepLimit: 3 }));
    expect(model.requests.map((r) => r.tools?.length ?? 0)).toEqual([1, 1, 0]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
  });

  it('passes model errors through (nothing is produced)', async () => {
    const model: ChatModel = {
      provider: 'test',
      // biome-ignore lint/correctness/useYield: fails before the first event
      async *stream() {
        throw new Error('upstream down');
      },
    };
    await expect(collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [] }))).rejects.toThrow('upstream down');
  });
});

describe('systemContext', () => {
  it('numbers the knowledge excerpts and keeps the instructions first', () => {
    const { system, sources } = systemContext('You are the support bot.', [
      { id: 'chunk_1', content: 'Refunds within 30 days.', score: 0.9, metadata: { documentId: 'doc_1', fileName: 'refunds.md', section: 'Refunds' } },
      { id: 'chunk_2', content: 'Shipping takes 2 days.', score: 0.5, metadata: { documentId: 'doc_2', fileName: 'shipping.md' } },
    ]);
    expect(system).toMatch(/^You are the support bot\./);
    expect(system).toContain('[1] refunds.md — Refunds\nRefunds within 30 days.');
    expect(system).toContain('[2] shipping.md\nShipping takes 2 days.');
    expect(sources.map((s) => [s.index, s.chunkId, s.documentId, s.fileName])).toEqual([
      [1, 'chunk_1', 'doc_1', 'refunds.md'],
      [2, 'chunk_2', 'doc_2', 'shipping.md'],
    ]);
    expect(systemContext(undefined, []).system).toBeUndefined();
  });
});
