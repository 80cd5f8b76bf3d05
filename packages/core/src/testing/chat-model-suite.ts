import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatRequest, ToolDefinition } from '../agent/chat-model.js';
import { collectChat } from '../agent/chat-model.js';
import { isPlatformError } from '../errors.js';
import { describeCapabilityCases } from './chat-model-capability-cases.js';
import { type ChatModelSuiteOptions, drain, expectWellFormed, rejection, type ScriptedChatReply, texts } from './chat-model-checks.js';

export type { ChatModelSuiteOptions, ScriptedChatReply };

const WEATHER: ToolDefinition = {
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};
const TIME: ToolDefinition = {
  name: 'get_time',
  description: 'The current time in a time zone',
  parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'], additionalProperties: false },
};

/**
 * The behaviour every `ChatModel` must have. Call it inside a vitest test file, e.g. against a
 * loopback fake of the provider's API:
 * `describeChatModel('openai', { create: () => openaiChatModel({ baseURL: fake.url }), model: 'gpt-4o-mini', scripted: { next: (r) => fake.script(r) } })`.
 */
export function describeChatModel(name: string, options: ChatModelSuiteOptions): void {
  const scripted = options.scripted;
  const script = async (reply: ScriptedChatReply) => {
    await scripted?.next(reply);
  };
  const request = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
    model: options.model,
    messages: [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content },
    ],
    temperature: 0,
    ...extra,
  });

  describe(`ChatModel conformance: ${name}`, () => {
    it('names its provider', async () => {
      const model = await options.create();
      expect(typeof model.provider).toBe('string');
      expect(model.provider).toMatch(/\S/);
    });

    it('streams text: at least one text event, then exactly one finish, last', async () => {
      const model = await options.create();
      const answer = 'The quick brown fox jumps over the lazy dog.';
      await script({ text: answer });
      const events = await drain(model.stream(request('Reply with one short sentence.')));
      const finish = expectWellFormed(events);
      const pieces = texts(events);
      expect(pieces.length).toBeGreaterThanOrEqual(1);
      expect(events.some((e) => e.type === 'tool_call')).toBe(false);
      if (scripted) {
        expect(pieces.join('')).toBe(answer);
        // Streamed, not buffered into one event.
        expect(pieces.length).toBeGreaterThan(1);
        expect(finish.reason).toBe('stop');
      }
    });

    it('collects into the concatenated text and the finish reason (collectChat)', async () => {
      const model = await options.create();
      const answer = 'Paris is the capital of France.';
      await script({ text: answer });
      const seen: ChatEvent[] = [];
      const recorded = async function* () {
        for await (const event of model.stream(request('What is the capital of France? One sentence.'))) {
          seen.push(event);
          yield event;
        }
      };
      const result = await collectChat(recorded());
      expect(result.content).toBe(texts(seen).join(''));
      expect(result.content.length).toBeGreaterThan(0);
      expect(result.toolCalls).toEqual([]);
      const finish = seen[seen.length - 1];
      expect(finish?.type).toBe('finish');
      expect(result.finishReason).toBe((finish as Extract<ChatEvent, { type: 'finish' }>).reason);
      if (scripted) {
        expect(result.content).toBe(answer);
        expect(result.finishReason).toBe('stop');
      }
    });

    it('reports length when the answer is cut by maxTokens', async () => {
      const model = await options.create();
      await script({ text: 'Once upon a time', finishReason: 'length' });
      const events = await drain(model.stream(request('Write a story of 500 words about a lighthouse.', { maxTokens: 5 })));
      const finish = expectWellFormed(events);
      expect(finish.reason).toBe('length');
      if (scripted) expect(texts(events).join('')).toBe('Once upon a time');
    });

    it.runIf(scripted !== undefined)('turns the tools it is offered into whole tool_call events, before the finish', async () => {
      const model = await options.create();
      const weather = JSON.stringify({ city: 'Paris' });
      const time = JSON.stringify({ zone: 'Europe/Paris' });
      await script({
        toolCalls: [
          { name: 'get_weather', arguments: weather },
          { name: 'get_time', arguments: time },
        ],
      });
      const events = await drain(model.stream(request('What is the weather and the time in Paris?', { tools: [WEATHER, TIME] })));
      const finish = expectWellFormed(events);
      expect(finish.reason).toBe('tool_calls');
      const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
      expect(calls.map((c) => [c.name, c.arguments])).toEqual([
        ['get_weather', weather],
        ['get_time', time],
      ]);
      for (const call of calls) expect(call.id).toMatch(/\S/);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
      const result = await (async () => {
        await script({ toolCalls: [{ name: 'get_weather', arguments: weather }] });
        return collectChat(model.stream(request('Weather in Paris?', { tools: [WEATHER] })));
      })();
      expect(result.finishReason).toBe('tool_calls');
      expect(result.toolCalls.map((c) => c.name)).toEqual(['get_weather']);
    });

    it('accepts a conversation with tool calls and their results', async () => {
      const model = await options.create();
      await script({ text: 'It is sunny in Paris.' });
      const events = await drain(
        model.stream({
          model: options.model,
          tools: [WEATHER],
          temperature: 0,
          messages: [
            { role: 'system', content: 'You are a terse assistant. Use tools when they help.' },
            { role: 'user', content: 'What is the weather in Paris?' },
            { role: 'assistant', content: null, toolCalls: [{ id: 'call_suite_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
            { role: 'tool', toolCallId: 'call_suite_1', content: '{"weather":"sunny","celsius":21}' },
          ],
        }),
      );
      expectWellFormed(events);
      expect(texts(events).join('').length).toBeGreaterThan(0);
      if (scripted) expect(texts(events).join('')).toBe('It is sunny in Paris.');
    });

    it('reports usage when the upstream gives it', async () => {
      const model = await options.create();
      await script({ text: 'Hello there.', usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 } });
      const result = await collectChat(model.stream(request('Say hello.')));
      if (scripted) expect(result.usage).toEqual({ promptTokens: 12, completionTokens: 3, totalTokens: 15 });
      else if (result.usage) expect(result.usage.totalTokens).toBeGreaterThanOrEqual(result.usage.completionTokens);
    });

    it('rejects with aborted, yielding nothing, when the signal is already aborted', async () => {
      const model = await options.create();
      const controller = new AbortController();
      controller.abort();
      const seen: ChatEvent[] = [];
      const error = await rejection(
        (async () => {
          for await (const event of model.stream(request('Say hello.', { signal: controller.signal }))) seen.push(event);
        })(),
      );
      expect(seen).toEqual([]);
      expect(isPlatformError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'aborted' });
    });

    it('stops the stream with an aborted error when the signal is aborted mid-stream', async () => {
      const model = await options.create();
      const numbers = Array.from({ length: 60 }, (_, i) => String(i + 1)).join(' ');
      await script({ text: numbers, chunkDelayMs: 20 });
      const controller = new AbortController();
      const iterator = model.stream(request('Count from 1 to 200, separated by spaces.', { signal: controller.signal }))[Symbol.asyncIterator]();
      let first = await iterator.next();
      while (!first.done && first.value.type !== 'text') first = await iterator.next();
      expect(first.done).toBe(false);
      controller.abort();
      const started = Date.now();
      const seen: ChatEvent[] = [];
      const error = await rejection(
        (async () => {
          for (let next = await iterator.next(); !next.done; next = await iterator.next()) seen.push(next.value);
        })(),
      );
      expect(isPlatformError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'aborted' });
      expect(seen.some((e) => e.type === 'finish')).toBe(false);
      // It stopped: no waiting for the rest of the answer.
      expect(Date.now() - started).toBeLessThan(1000);
      if (scripted) expect(texts(seen).length).toBeLessThan(10);
      // Nothing after the error.
      expect((await iterator.next()).done).toBe(true);
    });

    it('can be left early, and the next call works', async () => {
      const model = await options.create();
      await script({ text: 'one two three four five six seven eight', chunkDelayMs: 10 });
      for await (const event of model.stream(request('Count to eight.'))) {
        if (event.type === 'text') break;
      }
      await script({ text: 'Still here.' });
      const result = await collectChat(model.stream(request('Are you still there? Answer briefly.')));
      expect(result.content.length).toBeGreaterThan(0);
      if (scripted) expect(result.content).toBe('Still here.');
    });

    describeCapabilityCases(options, script, request);

    it.runIf(scripted !== undefined)('turns an upstream failure into a PlatformError (upstream_error)', async () => {
      const model = await options.create();
      await script({ status: 400 });
      const error = await rejection(collectChat(model.stream(request('Say hello.'))));
      expect(isPlatformError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'upstream_error', retryable: false });
    });
  });
}
