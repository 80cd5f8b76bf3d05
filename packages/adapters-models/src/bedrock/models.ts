import { PlatformError } from '@agent-platform/core';
import { AwsV4Signer } from 'aws4fetch';
import { getJson } from '../ai-sdk/index.js';
import type { BedrockChatModelOptions, BedrockSetup } from './provider.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const has = (list: unknown, value: string): boolean => Array.isArray(list) && list.includes(value);

/**
 * The chat models of the account's region: the control plane's `GET /foundation-models`
 * (ListFoundationModels, signed with SigV4 for the `bedrock` service, through the same bounded,
 * guarded fetch as the chat), asked for and kept to the models that answer text on demand with
 * streaming (legacy ones included, until AWS retires them): the ids `bedrockChatModel` takes.
 * (Models offered only through an inference profile, `us.anthropic...`, are listed by
 * `GET /inference-profiles`, not read here.) It fails as the AI SDK's calls do (`getJson`), so
 * the adapter maps its failures as it maps the chat's.
 */
export async function listBedrockModels(
  setup: BedrockSetup,
  options: Pick<BedrockChatModelOptions, 'region' | 'accessKeyId' | 'secretAccessKey' | 'sessionToken'>,
  signal?: AbortSignal,
): Promise<string[]> {
  const url = `${setup.controlPlaneURL}/foundation-models?byOutputModality=TEXT&byInferenceType=ON_DEMAND`;
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
  const body = await getJson(setup.fetch, signed.url.toString(), Object.fromEntries(signed.headers.entries()), signal);
  const summaries = isObject(body) ? body.modelSummaries : undefined;
  if (!Array.isArray(summaries)) {
    throw new PlatformError('upstream_error', `${setup.where} answered GET /foundation-models with an unexpected shape`, { details: { provider: 'bedrock', upstream: setup.upstream } });
  }
  return summaries
    .filter(isObject)
    .filter((m) => has(m.outputModalities, 'TEXT') && (m.inferenceTypesSupported === undefined || has(m.inferenceTypesSupported, 'ON_DEMAND')))
    .filter((m) => m.responseStreamingSupported !== false)
    .flatMap((m) => (typeof m.modelId === 'string' ? [m.modelId] : []));
}
