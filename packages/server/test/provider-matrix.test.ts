import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sseEvents } from './helpers.js';
import { BAD_KEY, DOCUMENT, type Matrix, objectsIn, PNG, type Reply, ROWS, type Row, startMatrix, stopMatrix, TOO_LONG } from './provider-matrix-setup.js';

// Everything an agent does, on every provider (docs/PROVIDERS.md), through the official openai
// client against the built server, each provider's loopback fake speaking its wire format:
// knowledge with sources, a project's JavaScript tool and an MCP tool (server-everything over
// streamable HTTP) called in parallel, a chat's second turn seeing the first, streamed and not,
// usage and finish reasons, structured output, an image, a resumable stream, and each upstream
// refusal (the fake answering in its provider's documented form) as the caller's problem.

let m: Matrix;
beforeAll(async () => {
  m = await startMatrix();
}, 120_000);
afterAll(stopMatrix);

type Source = { index: number; fileName: string; excerpt: string };
type Chunk = OpenAI.ChatCompletionChunk & { sources?: Source[] };
const person = {
  type: 'json_schema' as const,
  json_schema: {
    name: 'person',
    strict: true,
    schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false },
  },
};
/** Both tools at once, then the answer. */
const toolRound = (answer: string): Reply[] => [
  {
    toolCalls: [
      { name: 'sum', arguments: '{"a":20,"b":22}' },
      { name: 'mcp__everything__echo', arguments: '{"message":"hello over MCP"}' },
    ],
  },
  { text: answer },
];
const bodies = (row: Row) => row.fake().requests.map((r) => JSON.stringify(r.body));
const ofRow = (row: Row) => m.projects.get(row.name) as string;
const textOf = (chunks: readonly Chunk[]) => chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
const finishOf = (chunks: readonly Chunk[]) => chunks.flatMap((c) => (c.choices[0]?.finish_reason ? [c.choices[0].finish_reason] : []));
type ApiError = InstanceType<typeof OpenAI.APIError>;
/** The errors of one question asked without and with `stream` (at once), each as the openai client throws it. */
const refusedBoth = (model: string, content = 'hello') =>
  Promise.all(
    [false, true].map((stream) =>
      m.client.chat.completions.create({ model, messages: [{ role: 'user', content }], stream }).then(
        () => new Error(`the ${stream ? 'streamed' : 'plain'} completion succeeded`),
        (e: unknown) => e,
      ),
    ),
  );
/** Both are the client's typed error with this status and OpenAI code. */
function expectRefused(errors: unknown[], type: abstract new (...args: never[]) => unknown, status: number, code: string): ApiError[] {
  for (const e of errors) {
    expect(e).toBeInstanceOf(type);
    expect((e as ApiError).status).toBe(status);
    expect((e as ApiError).error).toMatchObject({ code });
  }
  return errors as ApiError[];
}

describe.each(ROWS)('$name', (row) => {
  it('runs an agent with knowledge, a JavaScript tool and an MCP tool in parallel, and a chat whose streamed second turn sees the first', async () => {
    const fake = row.fake();
    fake.reset();
    const model = ofRow(row);
    const chatId = (await m.s.call('POST', '/api/chats', { body: { projectId: model } })).body.chat.id as string;
    fake.script(...toolRound('Within 30 days of delivery [1].'));
    const first = (await m.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'How long do I have for a refund?' }], chatId } as never)) as OpenAI.ChatCompletion & {
      sources: Source[];
    };
    expect(first.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Within 30 days of delivery [1].' } });
    expect(first.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(first.usage?.completion_tokens).toBeGreaterThan(0);
    expect(first.usage?.total_tokens).toBeGreaterThanOrEqual((first.usage?.prompt_tokens ?? 0) + (first.usage?.completion_tokens ?? 0));
    expect(first.sources).toMatchObject([{ index: 1, fileName: 'refunds.md', excerpt: expect.stringContaining('within 30 days') }]);
    const [asked, answered] = bodies(row);
    // The document reached the model's context, both tools were offered, and both results came back to it.
    expect(asked).toContain(DOCUMENT.split('\n').at(-1));
    expect(asked).toContain('"sum"');
    expect(asked).toContain('mcp__everything__echo');
    expect(answered).toContain('sum=42');
    expect(answered).toContain('Echo: hello over MCP');

    fake.script(...toolRound('You are welcome.'));
    const stream = await m.client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Thanks! Are refunds counted from the delivery?' }],
      stream: true,
      stream_options: { include_usage: true },
      chatId,
    } as never);
    const chunks: Chunk[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<Chunk>) chunks.push(chunk);
    expect(textOf(chunks)).toBe('You are welcome.');
    expect(finishOf(chunks)).toEqual(['stop']);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
    expect(chunks.find((c) => c.sources)?.sources).toMatchObject([{ fileName: 'refunds.md' }]);
    // The second turn's last model call carries the first turn, its tool rounds and the new ones.
    const last = bodies(row).at(-1) as string;
    for (const said of ['How long do I have for a refund?', 'Within 30 days of delivery [1].', 'Thanks! Are refunds counted from the delivery?', 'sum=42']) expect(last).toContain(said);
    expect(fake.requests).toHaveLength(4);
  });

  it('answers a json_schema response_format validated against the schema, refuses one that is not, and gives an image to the model in its format', async () => {
    const fake = row.fake();
    fake.reset();
    const model = ofRow(row);
    const ask = { model, messages: [{ role: 'user' as const, content: 'Who wrote Hamlet?' }], response_format: person };
    const json = row.json ?? ((text: string) => ({ text }));
    fake.script(json('{"name":"William Shakespeare","age":52}'));
    const answer = await m.client.chat.completions.create(ask);
    expect(JSON.parse(answer.choices[0]?.message.content ?? '')).toEqual({ name: 'William Shakespeare', age: 52 });
    fake.script(json('{"name":"William Shakespeare"}'));
    const refused = await m.client.chat.completions.create(ask).then(
      () => undefined,
      (e: { status: number; message: string }) => e,
    );
    expect(refused?.status).toBe(502);
    expect(refused?.message).toMatch(/schema/i);

    fake.script({ text: 'A single pixel.' });
    const picture = await m.client.chat.completions.create({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ],
    });
    expect(picture.choices[0]?.message.content).toBe('A single pixel.');
    expect(objectsIn(fake.requests.at(-1)?.body)).toContainEqual(expect.objectContaining(row.image(PNG)));
  });

  it('records a resumable stream of a chat and reads it back', async () => {
    const fake = row.fake();
    fake.reset();
    const model = ofRow(row);
    const chatId = (await m.s.call('POST', '/api/chats', { body: { projectId: model } })).body.chat.id as string;
    const streamId = (await m.s.call('POST', `/api/chats/${chatId}/streams`, { body: { chatId } })).body.stream.id as string;
    fake.script(...toolRound('Thirty days [1].'));
    const live = await m.s.call('POST', '/api/v1/ai/chat/completions', {
      body: { model, chatId, streamId, stream: true, messages: [{ role: 'user', content: 'How long for a refund?' }] },
    });
    expect(live.status).toBe(200);
    const replay = await (await fetch(`${m.s.url}/api/chats/${chatId}/streams/${streamId}`, { headers: { authorization: `Bearer ${m.s.keyA}` } })).text();
    const chunks = sseEvents<Chunk>(replay);
    expect(textOf(chunks)).toBe('Thirty days [1].');
    expect(finishOf(chunks)).toEqual(['stop']);
    expect(textOf(sseEvents<Chunk>(live.body as string))).toBe('Thirty days [1].');
  });

  it('answers upstream refusals as the caller problem they are, streamed and not: a bad key, a 429, a prompt too long, an unknown model', async () => {
    const fake = row.fake();
    fake.reset();
    const bare = m.bare.get(row.name) as { plain: string; badKey: string; badKeyCredential: string; unknownModel: string };
    for (const e of expectRefused(await refusedBoth(bare.badKey), OpenAI.InternalServerError, 502, 'upstream_auth')) {
      expect(e.message).toContain(`(${bare.badKeyCredential}) was refused`);
      expect(JSON.stringify(e.error)).not.toContain(BAD_KEY);
    }
    // The server waits as asked and tries once more: enough refusals for both calls.
    fake.script(...Array.from({ length: 6 }, () => row.rateLimited as Reply));
    for (const e of expectRefused(await refusedBoth(bare.plain), OpenAI.RateLimitError, 429, 'rate_limit_exceeded')) expect(e.headers?.get('retry-after') ?? null).toBe(row.retryAfter);
    fake.reset();
    expectRefused(await refusedBoth(bare.plain, TOO_LONG), OpenAI.BadRequestError, 400, 'context_length_exceeded');
    for (const e of expectRefused(await refusedBoth(bare.unknownModel), OpenAI.NotFoundError, 404, 'model_not_found')) expect(e.message).toContain(row.unknownModel);
  });

  it('answers a json_object response_format as a JSON object, and refuses an answer that is not one', async () => {
    const fake = row.fake();
    fake.reset();
    const model = (m.bare.get(row.name) as { plain: string }).plain;
    const ask = { model, messages: [{ role: 'user' as const, content: 'The answer, as JSON' }], response_format: { type: 'json_object' as const } };
    const json = row.jsonObject ?? row.json ?? ((text: string) => ({ text }));
    fake.script(json('{"answer":42}'));
    const answer = await m.client.chat.completions.create(ask);
    expect(JSON.parse(answer.choices[0]?.message.content ?? '')).toEqual({ answer: 42 });
    expect(objectsIn(fake.requests.at(-1)?.body)).toContainEqual(expect.objectContaining(row.jsonMode));
    fake.script(json('[42]'));
    const refused = await m.client.chat.completions.create(ask).then(
      () => undefined,
      (e: ApiError) => e,
    );
    expect(refused?.status).toBe(502);
    expect(refused?.message).toContain('not a JSON object');
  });
});
