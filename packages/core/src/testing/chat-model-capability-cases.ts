import { expect, it } from 'vitest';
import type { ChatRequest } from '../agent/chat-model.js';
import { collectChat } from '../agent/chat-model.js';
import { type ChatModelSuiteOptions, drain, expectWellFormed, type ScriptedChatReply, texts } from './chat-model-checks.js';

/** A 1×1 transparent PNG, base64: the image of the image case. */
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const CITY: Record<string, unknown> = {
  type: 'object',
  properties: { city: { type: 'string' }, country: { type: 'string' } },
  required: ['city', 'country'],
  additionalProperties: false,
};

/**
 * The cases of what not every model does: a filtered answer (scripted only), images, structured
 * outputs and reasoning, each skipped where the model's `capabilities` (or, for reasoning, the
 * suite's options) do not say it does. Part of `describeChatModel`.
 */
export function describeCapabilityCases(
  options: ChatModelSuiteOptions,
  script: (reply: ScriptedChatReply) => Promise<void>,
  request: (content: string, extra?: Partial<ChatRequest>) => ChatRequest,
): void {
  const scripted = options.scripted;
  it.runIf(scripted !== undefined)('reports content_filter when the provider filtered the answer', async () => {
    const model = await options.create();
    await script({ text: 'I cannot', finishReason: 'content_filter' });
    const result = await collectChat(model.stream(request('Say something the filter stops.')));
    expect(result.finishReason).toBe('content_filter');
    expect(result.content).toBe('I cannot');
  });

  it('takes a user message with an image part (capabilities.images)', async (context) => {
    const model = await options.create();
    if (!model.capabilities?.images) return context.skip();
    await script({ text: 'A transparent pixel.' });
    const events = await drain(
      model.stream({
        model: options.model,
        temperature: 0,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in this image? One short sentence.' },
              { type: 'image', mediaType: 'image/png', data: PIXEL_PNG },
            ],
          },
        ],
      }),
    );
    expectWellFormed(events);
    expect(texts(events).join('').length).toBeGreaterThan(0);
    if (scripted) expect(texts(events).join('')).toBe('A transparent pixel.');
  });

  it('answers in JSON that follows responseFormat (capabilities.structuredOutputs)', async (context) => {
    const model = await options.create();
    if (!model.capabilities?.structuredOutputs) return context.skip();
    await script({ text: '{"city":"Paris","country":"France"}' });
    const schema = await collectChat(model.stream(request('Name the capital of France and its country.', { responseFormat: { type: 'json_schema', name: 'capital', schema: CITY, strict: true } })));
    expect(schema.finishReason).toBe('stop');
    const value = JSON.parse(schema.content) as Record<string, unknown>;
    expect(typeof value.city).toBe('string');
    expect(typeof value.country).toBe('string');
    if (scripted) expect(value).toEqual({ city: 'Paris', country: 'France' });
    await script({ text: '{"answer":42}' });
    const object = await collectChat(model.stream(request('Answer with a JSON object with one key, answer, the number 42.', { responseFormat: { type: 'json_object' } })));
    expect(typeof JSON.parse(object.content)).toBe('object');
    if (scripted) expect(JSON.parse(object.content)).toEqual({ answer: 42 });
  });

  it('streams reasoning as reasoning events, never in the text (capabilities.reasoning)', async (context) => {
    const model = await options.create();
    if (!model.capabilities?.reasoning || !options.reasoning) return context.skip();
    const thought = 'The user wants a number. Two plus two is four.';
    await script({ reasoning: thought, text: 'Four.' });
    const events = await drain(model.stream(request('What is 2 + 2? One word.', { providerOptions: options.reasoning.providerOptions })));
    expectWellFormed(events);
    const reasoning = events.flatMap((e) => (e.type === 'reasoning' ? [e.delta] : []));
    expect(reasoning.length).toBeGreaterThan(0);
    // Reasoning comes before the answer's text.
    expect(events.findIndex((e) => e.type === 'reasoning')).toBeLessThan(events.findIndex((e) => e.type === 'text'));
    if (scripted) {
      expect(reasoning.join('')).toBe(thought);
      expect(texts(events).join('')).toBe('Four.');
    }
  });
}
