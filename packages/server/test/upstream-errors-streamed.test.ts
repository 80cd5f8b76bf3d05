import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, type ScriptedReply, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, sseEvents, startTestServer, type TestServer } from './helpers.js';

// Upstream refusals of a streamed completion (`stream: true`): a run that fails before its
// first event is answered with the same status, headers and body as the same request without
// `stream` (the server holds a stream's headers until the run's first event), so OpenAI's
// clients throw their typed errors; one that fails later (or past the hold) ends its stream
// with an error event carrying the same OpenAI type and code.
let upstream: FakeUpstream;
let s: TestServer;
let client: OpenAI;
let project: string;
let credential: string;
const SECRET = 'sk-user-key-NEVER-SHOWN-9876';

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-operator-NEVER-SHOWN' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  credential = (await s.call('POST', '/api/v1/credentials', { body: { name: 'Team key', provider: 'openai', apiKey: SECRET, baseUrl: upstream.url } })).body.credential.id;
  project = (await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'gpt-test', provider: 'openai', credentialId: credential } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});

const limited: ScriptedReply = { status: 429, error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '1' } } };
const CASES: readonly { name: string; replies: () => ScriptedReply[]; status: number; code: string; type: string; error: abstract new (...args: never[]) => unknown; model?: string }[] = [
  {
    name: 'a refused key',
    replies: () => [{ status: 401, error: { message: `Incorrect API key provided: ${SECRET}.`, type: 'invalid_request_error', code: 'invalid_api_key' } }],
    status: 502,
    type: 'api_error',
    code: 'upstream_auth',
    error: OpenAI.InternalServerError,
  },
  // The server retries once after the wait the upstream asked for; both refused.
  { name: 'an upstream 429', replies: () => [limited, limited], status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', error: OpenAI.RateLimitError },
  {
    name: 'a prompt too long',
    replies: () => [{ status: 400, error: { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } }],
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    error: OpenAI.BadRequestError,
  },
  {
    name: 'an unknown model',
    replies: () => [{ status: 404, error: { message: 'The model `gpt-nope` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' } }],
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    error: OpenAI.NotFoundError,
    model: 'gpt-nope',
  },
  {
    name: 'a prompt the filter refused',
    replies: () => [{ status: 400, error: { message: 'The response was filtered due to the prompt triggering content management policy.', type: 'invalid_request_error', code: 'content_filter' } }],
    status: 400,
    type: 'invalid_request_error',
    code: 'content_filter',
    error: OpenAI.BadRequestError,
  },
];

const messages = [{ role: 'user' as const, content: 'hello' }];
/** The raw answer of a completion of the case's model, streamed or not. */
async function raw(model: string, stream: boolean, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${s.url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages, stream, ...extra }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('a streamed completion refused upstream before its first event', () => {
  for (const c of CASES) {
    it(`${c.name}: the same status, Retry-After and body as without stream, and the openai client's typed error`, async () => {
      // A project on the caller's credential (the refused key names it); an unknown model is asked by name.
      const model = c.model ?? project;
      upstream.script(...c.replies());
      const plain = await raw(model, false);
      upstream.script(...c.replies());
      const streamed = await raw(model, true);
      expect(plain.status).toBe(c.status);
      expect(streamed.status).toBe(c.status);
      expect(streamed.headers.get('content-type')).toContain('application/json');
      expect(JSON.parse(streamed.text)).toEqual(JSON.parse(plain.text));
      expect(JSON.parse(streamed.text).error).toMatchObject({ type: c.type, code: c.code });
      expect(streamed.headers.get('retry-after')).toBe(plain.headers.get('retry-after'));
      expect(streamed.text).not.toContain('NEVER-SHOWN');

      upstream.script(...c.replies());
      const thrown = await client.chat.completions.create({ model, messages, stream: true }).then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
      expect(thrown).toBeInstanceOf(c.error);
      expect(thrown?.status).toBe(c.status);
      expect(thrown?.error).toMatchObject({ type: c.type, code: c.code });
      if (c.status === 429) expect(thrown?.headers?.get('retry-after')).toBe('1');
      if (c.status === 502) {
        expect(thrown?.message).toContain(`the credential "Team key" (${credential}) was refused`);
        // Not retried: asking again with the same key only adds refusals.
        expect(thrown?.headers?.get('x-should-retry')).toBe('false');
      }
      if (c.model) expect(thrown?.message).toContain(c.model);
    });
  }

  it('a recorded stream (streamId) answers the status too, and its replay ends with the mapped error event', async () => {
    const chatId = (await s.call('POST', '/api/chats', { body: { projectId: project } })).body.chat.id as string;
    const streamId = (await s.call('POST', `/api/chats/${chatId}/streams`, { body: { chatId } })).body.stream.id as string;
    upstream.script(limited, limited);
    const live = await raw(project, true, { chatId, streamId });
    expect(live.status).toBe(429);
    expect(live.headers.get('retry-after')).toBe('1');
    expect(JSON.parse(live.text).error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const replay = await (await fetch(`${s.url}/api/chats/${chatId}/streams/${streamId}`, { headers: { authorization: `Bearer ${s.keyA}` } })).text();
    expect(sseEvents(replay)).toEqual([{ error: expect.objectContaining({ type: 'rate_limit_error', code: 'rate_limit_exceeded' }) }]);
    expect(replay.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('a run that answers streams as before: the role chunk with the sources comes with the first words', async () => {
    upstream.script({ text: 'Hello there' });
    const chunks = [];
    for await (const chunk of await client.chat.completions.create({ model: project, messages, stream: true })) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta).toMatchObject({ role: 'assistant' });
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello there');
  });
});

describe('past the hold', () => {
  let held: TestServer;
  beforeAll(async () => {
    // No hold: the headers go out before the upstream answers, as for a model slower than the hold.
    held = await startTestServer({ outbound: ALLOW_LOOPBACK, streamHoldMs: 0, env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-operator' } });
  });
  afterAll(async () => {
    await held?.stop();
  });

  it('a refusal that comes after the headers is the stream last event, with the mapped type and code', async () => {
    upstream.script({ status: 404, error: { message: 'The model `gpt-nope` does not exist.', type: 'invalid_request_error', code: 'model_not_found' } });
    const res = await held.call('POST', '/api/v1/chat/completions', { body: { model: 'gpt-nope', messages, stream: true } });
    expect(res.status).toBe(200);
    expect(sseEvents(res.body as string)).toEqual([{ error: expect.objectContaining({ type: 'invalid_request_error', code: 'model_not_found' }) }]);
    expect((res.body as string).startsWith(': ok\n\n')).toBe(true);
  });
});
