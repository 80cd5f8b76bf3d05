import { z } from 'zod';
import { CREDENTIAL_PROVIDER_IDS, type CredentialProviderId, MODEL_PROVIDERS } from '../registries/model-providers.js';
import { OPENAI_COMPATIBLE_SERVICES } from '../registries/openai-compatible.js';
import { callerUrl } from '../registries/provider-schemas.js';
import { Timestamp } from './common.js';

/** Providers a credential can be for (DESIGN.md, "Model providers"): those of registries/model-providers.ts that take one. */
export const CredentialProvider = z.enum(CREDENTIAL_PROVIDER_IDS);

const baseUrl = callerUrl
  .describe("The provider's address instead of its default (a gateway, a VPC endpoint, an OpenAI-compatible server; no query string or fragment)")
  .meta({ examples: OPENAI_COMPATIBLE_SERVICES.map((service) => service.baseUrl) });

const common = {
  name: z.string().trim().min(1).max(100),
  baseUrl: baseUrl.optional(),
  proxy: z.boolean().optional().describe("Send this provider's traffic through the configured HTTP(S) proxy"),
  default: z
    .boolean()
    .optional()
    .describe(
      "true: becomes the caller's default credential of its provider (projects that name none use it); false: never the default; absent: the default only when the provider has none yet (the first credential of a provider)",
    ),
};

type FieldsShape<K extends CredentialProviderId> = (typeof MODEL_PROVIDERS)[K]['fields']['shape'];
type Shaped<T> = T extends z.core.$ZodShape ? T : never;
type CreateVariant<K extends CredentialProviderId> = z.ZodObject<Shaped<typeof common & { provider: z.ZodLiteral<K> } & FieldsShape<K>>, z.core.$strict>;
type CreateVariants = { [K in CredentialProviderId]: CreateVariant<K> }[CredentialProviderId];

/**
 * A provider's fields as its credentials take them, its secrets marked `writeOnly` (JSON Schema's
 * word for a member sent and never returned), so the OpenAPI document tells a client which fields
 * to take like passwords (the console's credential form is generated from it).
 */
const fieldsOf = (provider: CredentialProviderId): Record<string, z.ZodType> => {
  const secrets: readonly string[] = MODEL_PROVIDERS[provider].secrets;
  return Object.fromEntries(
    Object.entries(MODEL_PROVIDERS[provider].fields.shape as Record<string, z.ZodType>).map(([name, schema]) => [name, secrets.includes(name) ? schema.meta({ writeOnly: true }) : schema]),
  );
};

/** One variant per credential provider: the common members and the provider's fields (its registry entry's `fields`). */
const variant = <K extends CredentialProviderId>(provider: K): CreateVariant<K> => z.strictObject({ ...common, provider: z.literal(provider), ...fieldsOf(provider) }) as unknown as CreateVariant<K>;

/**
 * `POST /api/v1/credentials`: one variant per provider (docs/PROVIDERS.md, "Credentials per
 * provider"), told apart by `provider`; each takes its provider's fields and no other.
 */
export const CreateCredentialRequest = z.discriminatedUnion('provider', CREDENTIAL_PROVIDER_IDS.map(variant) as unknown as [CreateVariants, ...CreateVariants[]], {
  error: (issue) => (issue.code === 'invalid_union' ? `provider must be one of ${CREDENTIAL_PROVIDER_IDS.join(', ')}` : undefined),
});
export type CreateCredentialRequest = z.input<typeof CreateCredentialRequest>;

/** Every provider's fields, each optional (a field a credential's provider does not have is refused by the service, naming it); an optional field may be null to remove it. */
const anyFields: Record<string, z.ZodType> = {};
for (const id of CREDENTIAL_PROVIDER_IDS) {
  for (const [field, schema] of Object.entries(fieldsOf(id))) {
    anyFields[field] = schema instanceof z.ZodOptional ? schema.nullable() : schema.optional();
  }
}

export const UpdateCredentialRequest = z.object({
  data: z
    .object({
      name: z.string().trim().min(1).max(100).optional(),
      ...anyFields,
      baseUrl: baseUrl.nullable().optional().describe("A new base URL (checked against the outbound policy), or null for the provider's default address"),
      isValid: z.boolean().optional(),
      proxy: z.boolean().optional(),
      default: z
        .boolean()
        .optional()
        .describe("true: becomes the default of its provider (the previous default stops being it); false: the provider then has no default (projects that name none use the server's environment)"),
      id: z.never({ error: 'the id of a credential cannot be changed' }).optional(),
      provider: z.never({ error: 'the provider of a credential cannot be changed' }).optional(),
    })
    .strict()
    .describe("The members to change: name, baseUrl, proxy, default, isValid, or fields of the credential's provider (another provider's field is a 400 naming it)"),
});
export type UpdateCredentialRequest = z.input<typeof UpdateCredentialRequest>;

export const Credential = z.object({
  id: z.string(),
  name: z.string(),
  provider: CredentialProvider,
  baseUrl: z.string().nullable().describe('The base URL with any user:password and query values masked as ****; stored encrypted'),
  proxy: z.boolean(),
  isValid: z.boolean().nullable().describe('The outcome of the last test (POST /api/v1/credentials/{id}/test) or as set; null when unknown (never tested since the key or address changed)'),
  default: z.boolean().describe("The caller's default credential of its provider: projects that name no credential use it"),
  apiKeyLast4: z.string().describe("The last four characters of the key (of the first secret field: Bedrock's secretAccessKey)"),
  fields: z.record(z.string(), z.unknown()).describe("The provider's fields that are not secrets (Bedrock's region and accessKeyId, Azure's endpoint masked, apiVersion, deployments)"),
  secretsLast4: z.record(z.string(), z.string()).describe('The last four characters of each secret field (apiKey, secretAccessKey, sessionToken)'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Credential = z.output<typeof Credential>;

export const CredentialResponse = z.object({ success: z.literal(true), credential: Credential });
export type CredentialResponse = z.output<typeof CredentialResponse>;
export const ListCredentialsResponse = z.object({ success: z.literal(true), credentials: z.array(Credential) });
export type ListCredentialsResponse = z.output<typeof ListCredentialsResponse>;

/** Why a credential test failed, by the platform's error codes (`invalid_request`: the outbound policy refused the address). */
export const CredentialTestResponse = z.object({
  success: z.literal(true),
  ok: z.boolean().describe('The provider answered the test call with success'),
  code: z
    .enum(['invalid_request', 'upstream_error', 'unavailable', 'timeout'])
    .nullable()
    .describe(
      'Why it failed, null when ok: invalid_request (the outbound policy refuses the address), upstream_error (the provider answered an error, e.g. 401 for a wrong key), unavailable (nothing answered, or the host name does not resolve), timeout',
    ),
  status: z.number().int().nullable().describe("The provider's HTTP status, null when no answer came"),
  message: z.string().describe("What happened: the number of models listed, or the provider's reason (never the key)"),
  durationMs: z.number().int().min(0),
  credential: Credential.describe('The credential with the outcome recorded in isValid'),
});
export type CredentialTestResponse = z.output<typeof CredentialTestResponse>;
