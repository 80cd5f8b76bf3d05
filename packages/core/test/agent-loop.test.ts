import { describe, expect, it } from 'vitest';
import { type ChatEvent, type ChatModel, type ChatRequest, collectChat, messageText } from '../src/agent/chat-model.js';
import { type AgentEvent, EXCERPT_CHARS, excerptOf, runAgentTurn, systemContext } from '../src/agent/loop.js';
import { checkToolResults, newToChat } from '../src/agent/tool-results.js';
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
    const model = scriptedModel([
      [
        { type: 'text', delta: 'Hel' },
        { type: 'text', delta: 'lo' },
        { type: 'finish', reason: 'stop', usage: usage(5) },
      ],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', system: 'Be brief.', history: [{ role: 'user', content: 'before' }], input: [{ role: 'user', content: 'hi' }], tools: [] }));
    expect(events.map((e) => e.type)).toEqual(['text', 'text', 'finish']);
    expect(events.at(-1)).toMatchObject({ reason: 'stop', usage: usage(5), messages: [{ role: 'assistant', content: 'Hello' }] });
    expect(model.requests[0]?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'before' },
      { role: 'user', content: 'hi' },
    ]);
    expect(model.requests[0]?.tools).toBeUndefined();
  });

  it('passes reasoning through apart from the text, and sums usage with its cache and reasoning counts over the steps', async () => {
    const model = scriptedModel([
      [
        { type: 'reasoning', delta: 'Weather: ask the tool.' },
        { type: 'tool_call', call: { id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' } },
        { type: 'finish', reason: 'tool_calls', usage: { promptTokens: 10, completionTokens: 4, totalTokens: 14, cachedPromptTokens: 6, reasoningTokens: 3 } },
      ],
      [
        { type: 'text', delta: 'Sunny.' },
        { type: 'finish', reason: 'stop', usage: { promptTokens: 20, completionTokens: 2, totalTokens: 22, cachedPromptTokens: 10, cacheWritePromptTokens: 5 } },
      ],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'weather?' }], tools: [weather] }));
    expect(events.map((e) => e.type)).toEqual(['reasoning', 'tool_call', 'tool_result', 'text', 'finish']);
    const finish = events.at(-1) as Extract<AgentEvent, { type: 'finish' }>;
    expect(finish.usage).toEqual({ promptTokens: 30, completionTokens: 6, totalTokens: 36, cachedPromptTokens: 16, cacheWritePromptTokens: 5, reasoningTokens: 3 });
    // The reasoning is not part of any message.
    expect(JSON.stringify(finish.messages)).not.toContain('ask the tool');
  });

  it("sends a tool step's reasoning blocks (the model's finish gave them) back with its tool calls in the next step of the turn", async () => {
    const blocks = [{ text: 'Ask the tool.', metadata: { anthropic: { signature: 'sig' } } }];
    const model = scriptedModel([
      [
        { type: 'reasoning', delta: 'Ask the tool.' },
        { type: 'tool_call', call: { id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' } },
        { type: 'finish', reason: 'tool_calls', usage: usage(3), reasoning: blocks },
      ],
      [
        { type: 'text', delta: 'Sunny.' },
        { type: 'finish', reason: 'stop', usage: usage(4) },
      ],
    ]);
    await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'weather?' }], tools: [weather] }));
    expect(model.requests[1]?.messages[1]).toEqual({ role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' }], reasoning: blocks });
  });

  it('collectChat keeps reasoning apart; messageText reads a content of parts', async () => {
    const events = async function* (): AsyncGenerator<ChatEvent> {
      yield { type: 'reasoning', delta: 'Think ' };
      yield { type: 'reasoning', delta: 'twice.' };
      yield { type: 'text', delta: 'Done.' };
      yield { type: 'finish', reason: 'content_filter' };
    };
    expect(await collectChat(events())).toEqual({ content: 'Done.', reasoning: 'Think twice.', toolCalls: [], finishReason: 'content_filter' });
    expect(
      messageText([
        { type: 'text', text: 'What is ' },
        { type: 'image', mediaType: 'image/png', data: 'AAAA' },
        { type: 'text', text: 'this?' },
      ]),
    ).toBe('What is this?');
    expect(messageText('plain')).toBe('plain');
  });

  it('gives the model an error naming the limit for arguments nested too deep, without running the tool', async () => {
    let ran = 0;
    const anyTool: AgentTool = { definition: { name: 'echo', description: '', parameters: { type: 'object' } }, run: async (args) => `${++ran}${JSON.stringify(args)}` };
    const deep = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const model = scriptedModel([
      [
        { type: 'tool_call', call: { id: 'c1', name: 'echo', arguments: deep } },
        { type: 'finish', reason: 'tool_calls', usage: usage(1) },
      ],
      [
        { type: 'text', delta: 'ok' },
        { type: 'finish', reason: 'stop', usage: usage(1) },
      ],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [anyTool] }));
    expect(events[1]).toMatchObject({ type: 'tool_result', isError: true, content: 'Error: arguments: nested deeper than 64 levels' });
    expect(ran).toBe(0);
  });

  it('runs tool calls, feeds the results back, and sums usage over the calls', async () => {
    const model = scriptedModel([
      [
        { type: 'tool_call', call: { id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' } },
        { type: 'finish', reason: 'tool_calls', usage: usage(10) },
      ],
      [
        { type: 'text', delta: 'It is sunny.' },
        { type: 'finish', reason: 'stop', usage: usage(20) },
      ],
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
      [
        { type: 'text', delta: 'Sorry.' },
        { type: 'finish', reason: 'stop' },
      ],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather, failing] }));
    const results = events.filter((e) => e.type === 'tool_result') as Extract<AgentEvent, { type: 'tool_result' }>[];
    expect(results.map((r) => r.isError)).toEqual([true, true, true]);
    expect(results[0]?.content).toMatch(/no tool named nope/);
    expect(results[1]?.content).toMatch(/^Error: .*JSON/);
    expect(results[2]?.content).toBe('Error: it broke');
  });

  it('stops offering tools at the step limit, so the last call answers', async () => {
    const call = (id: string): ChatEvent[] => [
      { type: 'tool_call', call: { id, name: 'weather', arguments: '{"city":"X"}' } },
      { type: 'finish', reason: 'tool_calls' },
    ];
    const model = scriptedModel([
      call('1'),
      call('2'),
      [
        { type: 'text', delta: 'done' },
        { type: 'finish', reason: 'stop' },
      ],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather], stepLimit: 3 }));
    expect(model.requests.map((r) => r.tools?.length ?? 0)).toEqual([1, 1, 0]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
  });

  const lookup = { name: 'lookup', description: "Looks a word up in the client's dictionary", parameters: { type: 'object', properties: { word: { type: 'string' } } } };
  type Finish = Extract<AgentEvent, { type: 'finish' }>;

  it("offers the client's functions beside the agent's tools and ends the turn with the client's calls", async () => {
    const model = scriptedModel([
      [
        { type: 'text', delta: 'Let me look.' },
        { type: 'tool_call', call: { id: 'k1', name: 'lookup', arguments: '{"word":"cat"}' } },
        { type: 'finish', reason: 'tool_calls', usage: usage(3) },
      ],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'cat?' }], tools: [weather], clientTools: [lookup] }));
    expect(model.requests[0]?.tools?.map((t) => t.name)).toEqual(['weather', 'lookup']);
    expect(events.map((e) => e.type)).toEqual(['text', 'finish']);
    const finish = events.at(-1) as Finish;
    expect(finish).toMatchObject({ reason: 'tool_calls', usage: usage(3), toolCalls: [{ id: 'k1', name: 'lookup', arguments: '{"word":"cat"}' }] });
    expect(finish.messages).toEqual([{ role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 'k1', name: 'lookup', arguments: '{"word":"cat"}' }] }]);
  });

  it("runs the agent's own calls of a step that also calls the client's functions, then hands the client its calls", async () => {
    const model = scriptedModel([
      [
        { type: 'tool_call', call: { id: 'a1', name: 'weather', arguments: '{"city":"Oslo"}' } },
        { type: 'tool_call', call: { id: 'k1', name: 'lookup', arguments: '{"word":"sunny"}' } },
        { type: 'finish', reason: 'tool_calls' },
      ],
    ]);
    const events = await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather], clientTools: [lookup] }));
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'tool_result', 'finish']);
    expect(events[0]).toMatchObject({ call: { id: 'a1' } });
    const finish = events.at(-1) as Finish;
    expect(finish.toolCalls).toEqual([{ id: 'k1', name: 'lookup', arguments: '{"word":"sunny"}' }]);
    expect(finish.messages).toEqual([
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'a1', name: 'weather', arguments: '{"city":"Oslo"}' },
          { id: 'k1', name: 'lookup', arguments: '{"word":"sunny"}' },
        ],
      },
      { role: 'tool', toolCallId: 'a1', content: 'Sunny in Oslo' },
    ]);
    expect(model.requests).toHaveLength(1);
  });

  it('applies tool_choice: none offers no tool; required and a named tool bind the first model call only', async () => {
    const answer: ChatEvent[] = [
      { type: 'text', delta: 'ok' },
      { type: 'finish', reason: 'stop' },
    ];
    const none = scriptedModel([answer]);
    await collect(runAgentTurn({ model: none, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather], clientTools: [lookup], toolChoice: 'none' }));
    expect(none.requests[0]).not.toHaveProperty('tools');
    expect(none.requests[0]).not.toHaveProperty('toolChoice');
    for (const toolChoice of ['required', { name: 'weather' }] as const) {
      const model = scriptedModel([
        [
          { type: 'tool_call', call: { id: 'a1', name: 'weather', arguments: '{"city":"Rome"}' } },
          { type: 'finish', reason: 'tool_calls' },
        ],
        answer,
      ]);
      const settings = { parallelToolCalls: false, topP: 0.5, stop: ['END'] };
      await collect(runAgentTurn({ model, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather], toolChoice, modelSettings: settings }));
      expect(model.requests.map((r) => r.toolChoice)).toEqual([toolChoice, undefined]);
      expect(model.requests.map((r) => [r.topP, r.stop, r.parallelToolCalls])).toEqual([
        [0.5, ['END'], false],
        [0.5, ['END'], false],
      ]);
    }
    // parallelToolCalls goes only with tools (the last step is offered none).
    const last = scriptedModel([answer]);
    await collect(runAgentTurn({ model: last, modelName: 'm', history: [], input: [{ role: 'user', content: 'x' }], tools: [weather], stepLimit: 1, modelSettings: { parallelToolCalls: false } }));
    expect(last.requests[0]).not.toHaveProperty('parallelToolCalls');
  });

  it("puts the request's system messages before the history, so a continued turn stays well-formed", async () => {
    const model = scriptedModel([
      [
        { type: 'text', delta: 'ok' },
        { type: 'finish', reason: 'stop' },
      ],
    ]);
    const history = [
      { role: 'user' as const, content: 'cat?' },
      { role: 'assistant' as const, content: null, toolCalls: [{ id: 'k1', name: 'lookup', arguments: '{}' }] },
    ];
    await collect(
      runAgentTurn({
        model,
        modelName: 'm',
        system: 'Agent.',
        history,
        input: [
          { role: 'system', content: 'Client.' },
          { role: 'tool', toolCallId: 'k1', content: 'a feline' },
        ],
        tools: [],
      }),
    );
    expect(model.requests[0]?.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant', 'tool']);
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

describe('excerptOf', () => {
  it('keeps a short text whole and cuts a long one at a word boundary, at most EXCERPT_CHARS with the ellipsis', () => {
    expect(excerptOf('# Refunds\n\n  ACME refunds   purchases.')).toBe('# Refunds ACME refunds purchases.');
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const cut = excerptOf(long);
    expect(Array.from(cut).length).toBeLessThanOrEqual(EXCERPT_CHARS);
    expect(cut).toMatch(/^word0 word1 .* word\d+…$/);
    expect(long.startsWith(cut.slice(0, -1))).toBe(true);
    // One long word is cut inside it; characters outside the BMP are never split.
    expect(Array.from(excerptOf('😀'.repeat(400)))).toHaveLength(EXCERPT_CHARS);
  });
});

describe('continuing a turn', () => {
  const asked = { role: 'user' as const, content: 'cat?' };
  const calls = {
    role: 'assistant' as const,
    content: null,
    toolCalls: [
      { id: 'a1', name: 'weather', arguments: '{}' },
      { id: 'k1', name: 'lookup', arguments: '{}' },
    ],
  };
  const agentResult = { role: 'tool' as const, toolCallId: 'a1', content: 'sunny' };
  const clientResult = { role: 'tool' as const, toolCallId: 'k1', content: 'a feline' };

  it("drops what the client resent of the chat, up to its copy of the calls' message, keeping its system messages", () => {
    const history = [asked, calls, agentResult];
    const resent = [{ role: 'system' as const, content: 'Client.' }, asked, { ...calls, toolCalls: [calls.toolCalls[1] as (typeof calls.toolCalls)[number]] }, clientResult];
    expect(newToChat(history, resent)).toEqual([resent[0], clientResult]);
    expect(newToChat(history, [clientResult])).toEqual([clientResult]);
    // A chat that waits for nothing takes the request as it is.
    expect(newToChat([...history, clientResult, { role: 'assistant', content: 'done' }], resent)).toEqual(resent);
  });

  it('refuses a conversation whose tool calls are not all answered, or whose tool message answers nothing, naming the message', () => {
    expect(() => checkToolResults([asked, calls, agentResult], [clientResult], [clientResult])).not.toThrow();
    expect(() => checkToolResults([asked, calls, agentResult], [], [])).toThrow('messages: tool call k1 (lookup) has no result');
    const next = { role: 'user' as const, content: 'and?' };
    expect(() => checkToolResults([asked, calls, agentResult], [next], [next])).toThrow(/^messages\.0: tool call k1 \(lookup\) has no result/);
    const stray = { role: 'tool' as const, toolCallId: 'zz', content: 'x' };
    expect(() => checkToolResults([], [asked, stray], [asked, stray])).toThrow('messages.1.tool_call_id: "zz" answers no tool call of the assistant message before it');
    const twice = [asked, calls, agentResult, clientResult, { ...clientResult }];
    expect(() => checkToolResults([], twice, twice)).toThrow(/^messages\.4\.tool_call_id/);
  });
});
