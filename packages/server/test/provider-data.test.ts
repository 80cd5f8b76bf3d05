import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform, type ChatEvent, type ChatModel, type ChatRequest } from '@agent-platform/core';
import { afterEach, describe, expect, it } from 'vitest';

// What a provider gives with an assistant message and needs back (signed reasoning blocks, a
// call's thought signature) is stored with the chat's message: sent back to that provider when a
// client's tool call is continued, never to another provider the chat's project moved to, and
// never shown to API clients. Through the library, with a model that records its requests.

const platforms: AgentPlatform[] = [];
afterEach(async () => {
  await Promise.all(platforms.splice(0).map((p) => p.close()));
});

const SIGNATURE = 'c2lnbmVkLWJ5LXRoZS1wcm92aWRlcg==';
const WEATHER = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** A model of `provider`: asked first, it calls the client's get_weather with its data on the call and the answer's reasoning; then it answers. */
function recordingModel(provider: string, requests: { provider: string; request: ChatRequest }[]): ChatModel {
  return {
    provider,
    async *stream(request): AsyncIterable<ChatEvent> {
      requests.push({ provider, request });
      if (request.messages.at(-1)?.role === 'user' && request.tools?.some((t) => t.name === 'get_weather')) {
        yield { type: 'reasoning', delta: 'I need the weather.' };
        yield { type: 'tool_call', call: { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', metadata: { [provider]: { thoughtSignature: SIGNATURE } } } };
        yield { type: 'finish', reason: 'tool_calls', reasoning: [{ text: 'I need the weather.', metadata: { [provider]: { signature: SIGNATURE } } }] };
        return;
      }
      yield { type: 'text', delta: 'Sunny.' };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

async function setup() {
  const requests: { provider: string; request: ChatRequest }[] = [];
  const platform = new AgentPlatform({ storage: memoryStorage(), agent: { models: (config) => recordingModel(config.provider, requests) } });
  platforms.push(platform);
  const { userId } = await platform.createUserWithKey({ name: 't' });
  const me = { userId };
  const { project } = await platform.createProject(me, { name: 'p', model: 'claude-test', provider: 'anthropic' });
  const { chat } = await platform.createChat(me, { projectId: project.id });
  const complete = async (messages: unknown[], tools = [WEATHER]) => {
    const answer = await platform.chatCompletion(me, { model: project.id, chatId: chat.id, messages, tools } as never, { form: 'v1' });
    if (answer.stream) throw new Error('expected a whole answer');
    return answer.body;
  };
  return { platform, me, project, chat, requests, complete };
}

const question = { role: 'user', content: 'Weather in Paris?' };
const asked = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] };
const result = { role: 'tool', tool_call_id: 'call_1', content: 'sunny' };

describe("a provider's data of an assistant message", () => {
  it("goes back to that provider when the client's tool call is continued by chatId, and is never shown", async () => {
    const { platform, me, chat, requests, complete } = await setup();
    const first = await complete([question]);
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    // What the client is given of the call: no signature.
    expect(JSON.stringify(first)).not.toContain(SIGNATURE);

    // The client posts the result (resending the conversation, as OpenAI clients do).
    expect((await complete([question, asked, result])).choices[0]?.message.content).toBe('Sunny.');
    const sent = requests.at(-1)?.request.messages.find((m) => m.role === 'assistant');
    expect(sent).toEqual({
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', metadata: { anthropic: { thoughtSignature: SIGNATURE } } }],
      reasoning: [{ text: 'I need the weather.', metadata: { anthropic: { signature: SIGNATURE } } }],
    });

    // The chat's messages as the API shows them: the call without the provider's data, no reasoning.
    const shown = await platform.chatMessages(me, chat.id);
    expect(shown.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(shown.messages[1]?.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(JSON.stringify(shown)).not.toContain(SIGNATURE);
    expect(JSON.stringify(shown)).not.toContain('I need the weather');
  });

  it('is left out of the history sent to another provider once the project moved to it', async () => {
    const { platform, me, project, requests, complete } = await setup();
    await complete([question]);
    await complete([question, asked, result]);
    await platform.updateProject(me, project.id, { provider: 'google', model: 'gemini-3-pro-preview' });
    await complete([{ role: 'user', content: 'And tomorrow?' }], []);
    const last = requests.at(-1);
    expect(last?.provider).toBe('google');
    const earlier = last?.request.messages.find((m) => m.role === 'assistant' && m.toolCalls);
    expect(earlier).toEqual({ role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    expect(JSON.stringify(last?.request.messages)).not.toContain(SIGNATURE);
  });
});
