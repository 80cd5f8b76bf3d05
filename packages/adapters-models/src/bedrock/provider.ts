import { type ByteLimit, PlatformError } from '@agent-platform/core';
import { answerTooLarge, displayUrl } from '@agent-platform/core/internal';
import { type AmazonBedrockProvider, createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { DEFAULT_ANSWER_LIMIT, describeUpstream, modelFetch } from '../ai-sdk/index.js';
import { isAmazonEventStream, limitFrames } from './frames.js';

export interface BedrockChatModelOptions {
  /** The AWS region, e.g. `us-east-1`: the signature's scope and the default endpoints' host. Required (`AWS_REGION` is never read). */
  readonly region: string;
  /** The access key id (`AKIA...`, or `ASIA...` with a session token). Required (`AWS_ACCESS_KEY_ID` is never read). */
  readonly accessKeyId: string;
  /** The secret access key: it signs each request (SigV4) and is never sent. Required. */
  readonly secretAccessKey: string;
  /** For temporary credentials (STS): sent as `x-amz-security-token`. Never taken from `AWS_SESSION_TOKEN`. */
  readonly sessionToken?: string;
  /**
   * The runtime endpoint. Default `https://bedrock-runtime.<region>.amazonaws.com`
   * (`amazonaws.com.cn` for `cn-` regions); a VPC endpoint
   * (`https://vpce-....bedrock-runtime.<region>.vpce.amazonaws.com`) or a gateway that forwards
   * signed requests. `AWS_ENDPOINT_URL*` are never read.
   */
  readonly baseURL?: string;
  /**
   * The control plane, where `listModels` reads `GET /foundation-models`. Default: `baseURL`
   * when one is given (a gateway or a test's fake serving both), else
   * `https://bedrock.<region>.amazonaws.com`.
   */
  readonly controlPlaneURL?: string;
  /** The fetch every call goes through (the guarded one: SSRF policy, redirects, DNS). Default: the global fetch. */
  readonly fetch?: typeof fetch;
  /** Milliseconds to wait for the answer (per attempt) and, once it streams, for each next event. Default 120000. */
  readonly timeoutMs?: number;
  /** Retries of a call that failed before its stream began (408, 429, 5xx, connection errors). Default 2. */
  readonly maxRetries?: number;
  /**
   * Most bytes of one answer: a body that is not streamed (an error, the model list), one
   * message of the event stream, and the text, reasoning and tool calls of a streamed answer.
   * Default 4 MiB (`DEFAULT_UPSTREAM_LIMITS.modelAnswerBytes`).
   */
  readonly answerLimit?: ByteLimit;
}

/** An AWS region as the endpoints name them (`us-east-1`, `us-gov-west-1`, `eu-central-2`, `cn-north-1`): it becomes part of a host name. */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

const dnsSuffix = (region: string): string => (region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com');

/** What the chat model and its listing share: the AI SDK's provider, the bounded fetch, the endpoints. */
export interface BedrockSetup {
  readonly provider: AmazonBedrockProvider;
  readonly fetch: typeof fetch;
  readonly baseURL: string;
  readonly controlPlaneURL: string;
  /** `Model provider bedrock (<base URL>)`, for messages. */
  readonly where: string;
  /** The base URL as `details.upstream` gives it. */
  readonly upstream: string;
  readonly answerLimit: ByteLimit;
  /** What no message may contain. */
  readonly secrets: readonly string[];
}

/**
 * The AI SDK's Bedrock provider with every setting given, so that nothing of the process's
 * AWS environment reaches a user's call: `createAmazonBedrock` falls back to
 * `AWS_BEARER_TOKEN_BEDROCK` for a missing `apiKey` (which would replace SigV4 with that bearer
 * token, sent to whatever `baseURL` says), to `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` for missing keys, and to
 * `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` / `AWS_ENDPOINT_URL` for a missing `baseURL`. So `apiKey`
 * is the empty string (the package then signs with SigV4), the keys come from a
 * `credentialProvider` (which the package prefers to every other source), and the region and
 * base URL are always passed. The package reads no file (`~/.aws` is the AWS SDK's, not its).
 *
 * Answers are read through `modelFetch` without its line-based event count (the event stream is
 * binary: a newline byte is no boundary), each event stream message, and the tool input the AI
 * SDK holds before handing it on, bounded by `frames.ts`.
 */
export function bedrockSetup(options: BedrockChatModelOptions): BedrockSetup {
  const fail = (what: string) => PlatformError.invalid(`bedrockChatModel: ${what}`);
  if (typeof options.region !== 'string' || !REGION.test(options.region)) throw fail('region must be an AWS region such as us-east-1');
  if (typeof options.accessKeyId !== 'string' || options.accessKeyId.trim() === '') throw fail('accessKeyId is required');
  if (typeof options.secretAccessKey !== 'string' || options.secretAccessKey === '') throw fail('secretAccessKey is required');
  if (options.sessionToken !== undefined && (typeof options.sessionToken !== 'string' || options.sessionToken === '')) throw fail('sessionToken, when given, must be a non-empty string');
  const answerLimit = options.answerLimit ?? DEFAULT_ANSWER_LIMIT;
  const region = options.region;
  const baseURL = (options.baseURL ?? `https://bedrock-runtime.${region}.${dnsSuffix(region)}`).replace(/\/+$/, '');
  const controlPlaneURL = (options.controlPlaneURL ?? options.baseURL ?? `https://bedrock.${region}.${dnsSuffix(region)}`).replace(/\/+$/, '');
  for (const url of [baseURL, controlPlaneURL]) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw fail(`${displayUrl(url)} is not a URL`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw fail(`${displayUrl(url)} is not an http(s) URL`);
  }
  const { where, upstream } = describeUpstream('bedrock', baseURL);
  const bounded = modelFetch({ fetch: options.fetch, answerLimit, where, streamed: isAmazonEventStream, eventBytes: false });
  const framed = (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await bounded(input, init);
    return isAmazonEventStream(response) ? limitFrames(response, answerLimit.bytes, (what) => answerTooLarge(where, what, answerLimit.bytes, answerLimit.setting)) : response;
  }) as typeof fetch;
  const credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}) };
  const provider = createAmazonBedrock({
    apiKey: '',
    region,
    baseURL,
    credentialProvider: async () => credentials,
    fetch: framed,
  });
  const secrets = [options.secretAccessKey, ...(options.sessionToken ? [options.sessionToken] : [])];
  return { provider, fetch: framed, baseURL, controlPlaneURL, where, upstream, answerLimit, secrets };
}
