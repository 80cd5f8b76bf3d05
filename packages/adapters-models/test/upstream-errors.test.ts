import { describe, expect, it } from 'vitest';
import { classifyUpstream, retryAfterSeconds, upstreamErrorMessage } from '../src/upstream-errors.js';

describe('classifyUpstream', () => {
  it('reads the wait of a 429 from retry-after-ms, else retry-after (seconds or a date), rounded up', () => {
    expect(retryAfterSeconds(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(2);
    expect(retryAfterSeconds({ 'Retry-After': '9' })).toBe(9);
    expect(retryAfterSeconds({ 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }, Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(30);
    expect(retryAfterSeconds({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, Date.parse('Wed, 21 Oct 2015 07:29:00 GMT'))).toBe(0);
    expect(retryAfterSeconds({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterSeconds(undefined)).toBeUndefined();
    expect(classifyUpstream({ status: 429, headers: { 'retry-after': '3' } })).toEqual({ kind: 'rate_limited', retryAfterSeconds: 3 });
  });

  it('tells the kinds apart by status and by the error’s codes or text', () => {
    expect(classifyUpstream({ status: 401 })).toEqual({ kind: 'auth' });
    expect(classifyUpstream({ status: 403, body: { error: { code: 'content_filter' } } })).toEqual({ kind: 'auth' });
    // OpenAI's and Azure's codes, whole bodies or their `error` member.
    expect(classifyUpstream({ status: 400, body: { error: { code: 'context_length_exceeded' } } })).toEqual({ kind: 'context_length' });
    expect(classifyUpstream({ status: 404, body: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } })).toEqual({ kind: 'model_not_found' });
    expect(classifyUpstream({ status: 400, body: { error: { code: 'content_filter', innererror: { code: 'ResponsibleAIPolicyViolation' } } } })).toEqual({ kind: 'content_filter' });
    // Servers without codes (vLLM, Ollama) are read by their text.
    expect(classifyUpstream({ status: 400, body: { object: 'error', message: "This model's maximum context length is 4096 tokens." } })).toEqual({ kind: 'context_length' });
    expect(classifyUpstream({ status: 404, body: { error: 'model "llama9" not found, try pulling it first' } })).toEqual({ kind: 'model_not_found' });
    // A 404 of a wrong path, a 400 that is about something else, a 500: no kind.
    expect(classifyUpstream({ status: 404, body: { error: { message: 'Invalid URL (POST /v1/chat)' } } })).toEqual({});
    expect(classifyUpstream({ status: 400, body: { error: { code: 'invalid_value', message: 'Invalid temperature' } } })).toEqual({});
    expect(classifyUpstream({ status: 500, body: { error: { message: 'context length' } } })).toEqual({});
  });

  it('words each kind, naming the model where it matters', () => {
    const where = 'Model provider x (https://x.example)';
    expect(upstreamErrorMessage(where, 404, ' (model_not_found)', { kind: 'model_not_found' }, 'gpt-9')).toBe(`${where} does not know the model "gpt-9" (HTTP 404) (model_not_found)`);
    expect(upstreamErrorMessage(where, 429, '', { kind: 'rate_limited' })).toBe(`${where} is rate limiting the requests (HTTP 429)`);
    expect(upstreamErrorMessage(where, 400, '', { kind: 'content_filter' })).toBe(`${where} refused the prompt by its content filter (HTTP 400)`);
    expect(upstreamErrorMessage(where, 502, '', {})).toBe(`${where} answered HTTP 502`);
  });
});
