import { isPlatformError, PlatformError } from '@agent-platform/core';
import { isUnresolvedHost, unreachableAs } from '@agent-platform/core/internal';
import { AwsV4Signer } from 'aws4fetch';
import { awsErrorType, bedrockHttpError } from './errors.js';
import type { BedrockChatModelOptions, BedrockSetup } from './provider.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const has = (list: unknown, value: string): boolean => Array.isArray(list) && list.includes(value);

/**
 * The chat models of the account's region: the control plane's `GET /foundation-models`
 * (ListFoundationModels, signed with SigV4 for the `bedrock` service, through the same bounded,
 * guarded fetch as the chat), asked for and kept to the models that answer text on demand with
 * streaming (legacy ones included, until AWS retires them): the ids `bedrockChatModel` takes. (Models offered only through
 * an inference profile, `us.anthropic...`, are listed by `GET /inference-profiles`, not read here.)
 */
export async function listBedrockModels(
  setup: BedrockSetup,
  options: Pick<BedrockChatModelOptions, 'region' | 'accessKeyId' | 'secretAccessKey' | 'sessionToken'>,
  signal?: AbortSignal,
): Promise<string[]> {
  const url = `${setup.controlPlaneURL}/foundation-models?byOutputModality=TEXT&byInferenceType=ON_DEMAND`;
  const where = `Model provider bedrock (${setup.controlPlaneURL})`;
  let response: Response;
  let text: string;
  try {
    const signed = await new AwsV4Signer({
      url,
      method: 'GET',
      headers: { accept: 'application/json' },
      service: 'bedrock',
      region: options.region,
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}),
    }).sign();
    response = await setup.fetch(signed.url.toString(), { method: 'GET', headers: signed.headers, ...(signal ? { signal } : {}) });
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw new PlatformError('aborted', 'Listing the models was aborted', { cause: signal.reason });
    if (isUnresolvedHost(error)) throw unreachableAs(`${where} is unreachable`, error);
    if (isPlatformError(error)) throw error;
    throw new PlatformError('unavailable', `${where} is unreachable`, { retryable: true, details: { provider: 'bedrock', upstream: setup.controlPlaneURL }, cause: error });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {}
  if (!response.ok) {
    throw bedrockHttpError(where, setup.controlPlaneURL, response.status, awsErrorType(response.headers, body), isObject(body) && typeof body.message === 'string' ? body.message : '');
  }
  const summaries = isObject(body) ? body.modelSummaries : undefined;
  if (!Array.isArray(summaries))
    throw new PlatformError('upstream_error', `${where} answered GET /foundation-models with an unexpected shape`, { details: { provider: 'bedrock', upstream: setup.controlPlaneURL } });
  return summaries
    .filter(isObject)
    .filter((m) => has(m.outputModalities, 'TEXT') && (m.inferenceTypesSupported === undefined || has(m.inferenceTypesSupported, 'ON_DEMAND')))
    .filter((m) => m.responseStreamingSupported !== false)
    .flatMap((m) => (typeof m.modelId === 'string' ? [m.modelId] : []));
}
