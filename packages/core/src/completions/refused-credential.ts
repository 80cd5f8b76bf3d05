import type { ChatModel, ProviderCredential } from '../agent/chat-model.js';
import { isPlatformError, PlatformError } from '../errors.js';

/**
 * A provider's refusal of the key (`upstream_error` with `details.kind: 'auth'`) naming whose
 * key it was: the caller's credential (its name and id, never its secret, and how to fix it),
 * or the server's own key when the caller has no credential of the provider. Any other error
 * as it is.
 */
export function namingCredential(error: unknown, provider: string, credential: ProviderCredential | undefined): unknown {
  if (!isPlatformError(error) || error.code !== 'upstream_error' || error.details?.kind !== 'auth') return error;
  const whose = credential?.id
    ? `the credential "${credential.name ?? credential.id}" (${credential.id}) was refused: give it a working key (PATCH /api/v1/credentials/${credential.id}) or use another credential`
    : `the server's own ${provider} key was refused (you have no ${provider} credential: add one with POST /api/v1/credentials)`;
  return new PlatformError('upstream_error', `${error.message}; ${whose}`, {
    details: { ...error.details, credentialId: credential?.id ?? null },
    ...(error.retryable !== undefined ? { retryable: error.retryable } : {}),
    cause: error,
  });
}

/** `model`, its failures passed through `namingCredential`. */
export function withCredentialNamed(model: ChatModel, provider: string, credential: ProviderCredential | undefined): ChatModel {
  return {
    provider: model.provider,
    ...(model.capabilities ? { capabilities: model.capabilities } : {}),
    async *stream(request) {
      try {
        yield* model.stream(request);
      } catch (error) {
        throw namingCredential(error, provider, credential);
      }
    },
    ...(model.listModels ? { listModels: model.listModels.bind(model) } : {}),
  };
}
