import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// Upstream refusals at the endpoint (issue 28): every adapter tells their kind
// (details.kind), the server answers each as the caller's problem it is, in OpenAI's shape.
let upstream: FakeUpstream;
let s: TestServer;
let client: OpenAI;
const SECRET = 'sk-user-key-NEVER-SHOWN-4321';

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-operator-NEVER-SHOWN' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

type ApiError = InstanceType<typeof OpenAI.APIError>;
/** The error a call answered (it fails the test when it succeeds). */
const failing = (call: Promise<unknown>): Promise<ApiError> =>
  call.then(
    () => {
      throw new Error('the completion succeeded');
    },
    (e: unknown) => e as ApiError,
  );
const ask = (model = 'gpt-test') => failing(client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] }));

describe('upstream refusals at the endpoint', () => {
  it('a refused key is 502 naming the credential by name and id, never its secret', async () => {
    const credential = (await s.call('POST', '/api/v1/credentials', { body: { name: 'Team key', provider: 'openai', apiKey: SECRET, baseUrl: `${upstream.url}` } })).body.credential;
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'gpt-test', provider: 'openai', credentialId: credential.id } })).body.project.id;
    upstream.script({ status: 401, error: { message: `Incorrect API key provided: ${SECRET}.`, type: 'invalid_request_error', code: 'invalid_api_key' } });
    const error = await ask(project);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ type: 'api_error', code: 'upstream_auth' });
    expect(error.message).toContain(`the credential "Team key" (${credential.id}) was refused`);
    expect(JSON.stringify(error.error)).not.toContain('NEVER-SHOWN');
    // Without a credential of the caller's, it is the server's own key that was refused.
    upstream.script({ status: 401, error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    const operator = await failing(client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }, { headers: { authorization: `Bearer ${s.keyB}` } }));
    expect(operator.status).toBe(502);
    expect(operator.message).toContain("the server's own openai key was refused");
    expect(JSON.stringify(operator.error)).not.toContain('NEVER-SHOWN');
  });

  it("an upstream 429 is the caller's 429 with the upstream's Retry-After", async () => {
    const limited = { status: 429, error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '1' } } };
    // The server retries once after the wait the upstream asked for; both refused.
    upstream.script(limited, limited);
    const res = await s.call('POST', '/api/v1/chat/completions', { key: s.keyB, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    upstream.script(limited, limited);
    const error = await ask();
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('a prompt too long for the model is 400 context_length_exceeded', async () => {
    upstream.script({
      status: 400,
      error: { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' },
    });
    const error = await ask();
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded' });
  });

  it('an unknown model is 404 naming the model', async () => {
    upstream.script({ status: 404, error: { message: 'The model `gpt-nope` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' } });
    const error = await ask('gpt-nope');
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.error).toMatchObject({ code: 'model_not_found' });
    expect(error.message).toContain('gpt-nope');
  });

  it("a prompt the provider's filter refused is 400 content_filter", async () => {
    upstream.script({ status: 400, error: { message: 'The response was filtered due to the prompt triggering content management policy.', type: 'invalid_request_error', code: 'content_filter' } });
    const error = await ask();
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'content_filter' });
  });

  it('any other upstream failure stays 502', async () => {
    upstream.script({ status: 500 }, { status: 500 });
    const error = await ask();
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ type: 'api_error', code: 'upstream_error' });
  });
});
