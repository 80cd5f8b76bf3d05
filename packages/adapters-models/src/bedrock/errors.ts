import type { FailureReading, UpstreamFailure } from '../ai-sdk/index.js';

const WORD = /^[A-Za-z][\w.-]{0,63}$/;
const record = (value: unknown): Record<string, unknown> | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);

/**
 * The AWS error type of a Bedrock failure (`ThrottlingException`, `ServiceQuotaExceededException`,
 * ...): the `x-amzn-errortype` header up to its `:` (`ValidationException:http://internal.amazon.com/coral/...`),
 * else the body's `__type` without its namespace (`ns#Type`, AWS's JSON protocols). Exceptions
 * inside the event stream carry the status the AI SDK gives their type (429 for throttling).
 */
export function awsErrorType(failure: Pick<UpstreamFailure, 'headers' | 'body'>): string | undefined {
  for (const candidate of [failure.headers['x-amzn-errortype'], record(failure.body)?.__type]) {
    if (typeof candidate !== 'string') continue;
    const type = (candidate.split(':')[0] ?? '').split('#').at(-1)?.trim() ?? '';
    if (WORD.test(type)) return type;
  }
  return undefined;
}

/** Bedrock's types of "too much, wait": a 429 too, but `ServiceQuotaExceededException` comes as a 400. */
const RATE_LIMITED = new Set(['ThrottlingException', 'ServiceQuotaExceededException', 'ModelNotReadyException']);

/**
 * What Bedrock says its own way, beyond the common reading of the adapter (status, the
 * `x-amzn-errortype` reason, the texts "The provided model identifier is invalid." and "Input
 * is too long for requested model."): the throttling types as `rate_limited` whatever their status.
 */
export function classifyBedrockFailure(failure: UpstreamFailure): FailureReading | undefined {
  const type = awsErrorType(failure);
  return type && RATE_LIMITED.has(type) ? { kind: 'rate_limited' } : undefined;
}
