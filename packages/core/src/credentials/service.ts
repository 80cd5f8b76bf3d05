import type { z } from 'zod';
import { type ChatModelResolver, providerConfig } from '../agent/chat-model.js';
import type { Caller, PlatformContext } from '../context.js';
import { isPlatformError, PlatformError } from '../errors.js';
import { displayUrl, MASK } from '../net/display.js';
import type { CreateCredentialRequest, CredentialResponse, CredentialTestResponse, ListCredentialsResponse, UpdateCredentialRequest } from '../schemas/credentials.js';
import type { ResolvedProvider } from '../schemas/projects.js';
import type { DefaultModelsQuery, ProviderModelsResponse } from '../schemas/provider-models.js';
import type { SecretBox } from '../security/secrets.js';
import type { CredentialPatch, CredentialRecord, ProjectRecord, StorageAdapter } from '../storage/types.js';
import { checkAddresses } from './addresses.js';
import { checkNamedCredential, chooseCredential, type DefaultBaseUrl, describeChoice, shownBaseUrl, type UsableCredential, unseal } from './choose.js';
import { checkFieldsOf, fieldsOf, mergeFields, openFields, sealFields, secretValues } from './fields.js';
import { storedUrl, toCredential } from './records.js';

/** How long a credential's test call, or a provider's model list, may take, answer included. */
export const CREDENTIAL_TEST_TIMEOUT_MS = 10_000;

/** Besides the context's `secrets` (without it, every call answers `unsupported`) and `fetch` (whose policy checks a `baseUrl` when saved). */
export interface CredentialsDeps {
  /** The chat models of provider calls (the test call goes where they go); without it, tests answer `unsupported`. */
  readonly models: ChatModelResolver | undefined;
  readonly defaultBaseUrl: DefaultBaseUrl | undefined;
  /** Default `CREDENTIAL_TEST_TIMEOUT_MS`. */
  readonly testTimeoutMs?: number;
}

type CreateBody = z.output<typeof CreateCredentialRequest>;
type UpdateBody = z.output<typeof UpdateCredentialRequest>;
type DefaultModels = z.output<typeof DefaultModelsQuery>;

type TestOutcome = Omit<CredentialTestResponse, 'success' | 'credential'>;

const notFound = () => PlatformError.notFound('Credential not found');
const plural = (ids: readonly string[]) => `project${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;

/**
 * A user's provider credentials (docs/API.md, "Credentials"): keys and addresses sealed at rest,
 * addresses checked against the outbound policy when saved, one explicit default per provider,
 * deletes that never move a project to another upstream, and a test call.
 */
export class CredentialsService {
  readonly #ctx: PlatformContext;
  readonly #deps: CredentialsDeps;

  constructor(ctx: PlatformContext, deps: CredentialsDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
  }

  #box(): SecretBox {
    if (!this.#ctx.secrets) throw new PlatformError('unsupported', 'Credentials need a master key: construct AgentPlatform with `secrets`');
    return this.#ctx.secrets;
  }

  /** `POST /api/v1/credentials`: the key is sealed before it is stored and never returned. */
  async create(caller: Caller, body: CreateBody): Promise<CredentialResponse> {
    const box = this.#box();
    const fields = fieldsOf(body);
    await checkAddresses(this.#ctx.fetch, body.provider, { ...fields, ...(body.baseUrl ? { baseUrl: body.baseUrl } : {}) }, []);
    const now = this.#ctx.clock.now();
    const record = await this.#ctx.storage.transaction(async (tx) => {
      await this.#ctx.caps.reserve(tx, caller.userId, 'credentials');
      return tx.credentials.insert({
        id: this.#ctx.ids.next('credential'),
        userId: caller.userId,
        name: body.name,
        provider: body.provider,
        ...sealFields(body.provider, fields, box),
        ...storedUrl(body.baseUrl ?? null, box),
        proxy: body.proxy ?? false,
        isValid: null,
        isDefault: body.default ?? 'if-none',
        createdAt: now,
        updatedAt: now,
      });
    });
    return { success: true, credential: toCredential(record) };
  }

  /** `GET /api/v1/credentials`: newest first, without secrets. */
  async list(caller: Caller): Promise<ListCredentialsResponse> {
    return { success: true, credentials: (await this.#ctx.storage.credentials.list(caller.userId)).map(toCredential) };
  }

  /** `GET /api/v1/credentials/{id}`. */
  async get(caller: Caller, id: string): Promise<CredentialResponse> {
    const record = await this.#ctx.storage.credentials.get(caller.userId, id);
    if (!record) throw notFound();
    return { success: true, credential: toCredential(record) };
  }

  /**
   * `PATCH /api/v1/credentials/{id}`: changes only the members given. A new key or address makes
   * the validity unknown again (unless `isValid` is given too); `default: true` moves the
   * provider's default here.
   */
  async update(caller: Caller, id: string, { data }: UpdateBody): Promise<{ success: true; message: string }> {
    const box = this.#box();
    const given = fieldsOf(data);
    const current = Object.keys(given).length > 0 ? await this.#ctx.storage.credentials.get(caller.userId, id) : undefined;
    if (current) checkFieldsOf(current.provider, given);
    await checkAddresses(this.#ctx.fetch, current?.provider ?? '', { ...given, ...(data.baseUrl ? { baseUrl: data.baseUrl } : {}) }, ['data']);
    const patchOf = (record: CredentialRecord | undefined): CredentialPatch => ({
      ...(data.name !== undefined ? { name: data.name } : {}),
      ...(record ? sealFields(record.provider, mergeFields(openFields(record, box), given), box) : {}),
      ...(data.baseUrl !== undefined ? storedUrl(data.baseUrl, box) : {}),
      ...(record || data.baseUrl !== undefined ? { isValid: null } : {}),
      ...(data.isValid !== undefined ? { isValid: data.isValid } : {}),
      ...(data.proxy !== undefined ? { proxy: data.proxy } : {}),
      ...(data.default !== undefined ? { isDefault: data.default } : {}),
      updatedAt: this.#ctx.clock.now(),
    });
    // New fields are merged with the stored ones read in the same transaction, so two updates of different fields both hold.
    const updated = current
      ? await this.#ctx.storage.transaction(async (tx) => {
          const record = await tx.credentials.get(caller.userId, id);
          return record && tx.credentials.update(caller.userId, id, patchOf(record));
        })
      : await this.#ctx.storage.credentials.update(caller.userId, id, patchOf(undefined));
    if (!updated) throw notFound();
    return { success: true, message: 'Credential updated' };
  }

  /**
   * `DELETE /api/v1/credentials/{id}`. A credential projects use is not deleted from under them
   * (that would move their calls to another upstream without a word), 409 naming them: one a
   * project names, and the default of its provider while projects of that provider name none.
   */
  async delete(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    await this.#ctx.storage.transaction(async (tx) => {
      const record = await tx.credentials.get(caller.userId, id);
      if (!record) throw notFound();
      const naming = await tx.projects.usingCredential(caller.userId, id);
      if (naming.length > 0) {
        throw new PlatformError('conflict', `Credential ${id} is named by ${plural(naming)}: set their credentialId to another credential or null first`, {
          details: { projects: naming },
        });
      }
      const relying = record.isDefault ? await tx.projects.namingNoCredential(caller.userId, record.provider) : [];
      if (relying.length > 0) {
        throw new PlatformError(
          'conflict',
          `Credential ${id} is the default ${record.provider} credential, used by ${plural(relying)} (they name no credential): make another credential the default (default: true) or set their credentialId first`,
          { details: { projects: relying } },
        );
      }
      if (!(await tx.credentials.delete(caller.userId, id))) throw notFound();
    });
    return { success: true, message: 'Credential deleted' };
  }

  /**
   * `POST /api/v1/credentials/{id}/test`: one cheap real call where the credential's provider
   * calls go (the provider's models route, through the guarded fetch and the proxy when set),
   * within the time limit. Answers ok, or why not (the policy's refusal, the provider's status
   * and message, unreachable, timeout), and records the outcome in `isValid`.
   */
  async test(caller: Caller, id: string, signal?: AbortSignal): Promise<CredentialTestResponse> {
    const box = this.#box();
    const record = await this.#ctx.storage.credentials.get(caller.userId, id);
    if (!record) throw notFound();
    // The secrets only, to keep them out of the message: a stored address a call refuses is an outcome of the test.
    const secrets = secretValues(record.provider, openFields(record, box));
    const started = performance.now();
    let outcome: Omit<TestOutcome, 'durationMs'>;
    try {
      const names = await this.#listModels(record.provider, record, signal);
      outcome = { ok: true, code: null, status: null, message: `The provider answered: ${names.length} model${names.length === 1 ? '' : 's'} listed` };
    } catch (error) {
      if (signal?.aborted) throw new PlatformError('aborted', 'The credential test was aborted', { cause: signal.reason });
      outcome = failure(error);
    }
    const durationMs = Math.round(performance.now() - started);
    // Never the key, whatever an upstream echoed (adapters scrub it too).
    const message = secrets.reduce((text, secret) => text.split(secret).join(MASK), outcome.message);
    const stored = await this.#record(caller.userId, record, outcome.ok);
    return { success: true, ...outcome, message, durationMs, credential: toCredential(stored) };
  }

  /**
   * `GET /api/v1/credentials/{id}/models`: the models the credential's upstream offers (what a
   * project's model picker suggests), asked as the test asks, within the same time limit.
   * Failures are the provider's reason as errors (`upstream_error` with its status, `unavailable`,
   * `timeout`, the outbound policy's refusal).
   */
  async models(caller: Caller, id: string, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    const record = await this.#ctx.storage.credentials.get(caller.userId, id);
    if (!record) throw notFound();
    return this.#modelsOf(record.provider, record, signal);
  }

  /**
   * `GET /api/v1/credentials/default/models?provider=`: the models of the upstream a project of
   * that provider naming no credential calls: the caller's default credential of it, else the
   * server's environment (OPENAI_BASE_URL, OLLAMA_HOST).
   */
  async defaultModels(caller: Caller, { provider }: DefaultModels, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    const { record } = this.#ctx.secrets ? await chooseCredential(this.#ctx.storage, caller.userId, provider, null) : { record: undefined };
    return this.#modelsOf(provider, record, signal);
  }

  /**
   * The caller's credential for a provider call, decrypted: the one `credentialId` names (a
   * project's), else the caller's default of the provider (`chooseCredential`).
   * Undefined when there is none (callers fall back to the environment).
   */
  async resolve(caller: Caller, provider: string, credentialId?: string | null): Promise<UsableCredential | undefined> {
    if (!this.#ctx.secrets) return undefined;
    const { record } = await chooseCredential(this.#ctx.storage, caller.userId, provider, credentialId);
    return record ? unseal(record, this.#ctx.secrets) : undefined;
  }

  /** That `credentialId` names one of the user's credentials of `provider`, read in `storage` (a project's transaction): see `checkNamedCredential`. */
  checkNamed(storage: StorageAdapter, userId: string, credentialId: string, provider: string): Promise<void> {
    return checkNamedCredential(storage, userId, credentialId, provider);
  }

  /** Where a project's model calls go: the precedence of credentials applied (`describeChoice`); throws when the credential it names is gone. */
  async resolvedFor(caller: Caller, project: ProjectRecord): Promise<ResolvedProvider> {
    const choice = await chooseCredential(this.#ctx.storage, caller.userId, project.provider, project.credentialId);
    return describeChoice(project, choice, this.#deps.defaultBaseUrl);
  }

  async #modelsOf(provider: string, record: CredentialRecord | undefined, signal: AbortSignal | undefined): Promise<ProviderModelsResponse> {
    const names = await this.#listModels(provider, record, signal);
    return {
      success: true,
      provider: provider as ProviderModelsResponse['provider'],
      credentialId: record?.id ?? null,
      baseUrl: shownBaseUrl(provider, record, this.#deps.defaultBaseUrl),
      models: [...new Set(names)].sort().map((name) => ({ id: name })),
    };
  }

  /**
   * The provider's models route, asked where the calls of `record` go (without one, where the
   * server's environment sends them), within the time limit: past it, `timeout` naming the
   * provider, its address and the limit.
   */
  async #listModels(provider: string, record: CredentialRecord | undefined, signal: AbortSignal | undefined): Promise<string[]> {
    const resolve = this.#deps.models;
    if (!resolve) throw new PlatformError('unsupported', 'Asking a provider needs model providers: construct AgentPlatform with `agent: { models }`');
    const usable = record ? unseal(record, this.#box()) : undefined;
    const model = resolve(providerConfig(provider, usable));
    if (!model.listModels) throw new PlatformError('unsupported', `Provider ${provider} has no models route`);
    const address = usable?.baseUrl ?? this.#deps.defaultBaseUrl?.(provider);
    const limitMs = this.#deps.testTimeoutMs ?? CREDENTIAL_TEST_TIMEOUT_MS;
    const limit = AbortSignal.timeout(limitMs);
    try {
      return await model.listModels({ signal: signal ? AbortSignal.any([signal, limit]) : limit });
    } catch (error) {
      if (limit.aborted && !signal?.aborted) {
        throw new PlatformError('timeout', `Model provider ${provider}${address ? ` (${displayUrl(address)})` : ''} did not answer within ${limitMs} ms`, { retryable: true, cause: error });
      }
      throw error;
    }
  }

  /** Writes the outcome, unless the key, address or proxy changed while the test ran (it was not about those). */
  async #record(userId: string, tested: CredentialRecord, ok: boolean): Promise<CredentialRecord> {
    return this.#ctx.storage.transaction(async (tx) => {
      const now = await tx.credentials.get(userId, tested.id);
      if (!now) throw notFound();
      const same = now.secret === tested.secret && now.baseUrl === tested.baseUrl && now.baseUrlSecret === tested.baseUrlSecret && now.proxy === tested.proxy;
      if (!same || now.isValid === ok) return now;
      return (await tx.credentials.update(userId, tested.id, { isValid: ok, updatedAt: this.#ctx.clock.now() })) ?? now;
    });
  }
}

const TEST_FAILURES = new Set<string>(['invalid_request', 'upstream_error', 'unavailable', 'timeout']);

/** What a failed test call says: the platform's error as it is (code, message, the upstream's status). */
function failure(error: unknown): Omit<TestOutcome, 'durationMs'> {
  if (!isPlatformError(error) || !TEST_FAILURES.has(error.code)) throw error;
  const status = error.details?.status;
  return { ok: false, code: error.code as NonNullable<TestOutcome['code']>, status: typeof status === 'number' ? status : null, message: error.message };
}
