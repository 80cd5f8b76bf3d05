import { z } from 'zod';
import { Timestamp } from './common.js';

/** Providers a credential can be for (DESIGN.md, "Model providers"). */
export const CredentialProvider = z.enum(['openai', 'ollama']);

const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2000)
  .describe('Base URL of an OpenAI-compatible server or an Ollama host');

export const CreateCredentialRequest = z
  .object({
    name: z.string().trim().min(1).max(100),
    provider: CredentialProvider,
    apiKey: z.string().min(1).max(4096).describe('Stored encrypted; never returned'),
    baseUrl: baseUrl.optional(),
    proxy: z.boolean().optional().describe("Send this provider's traffic through the configured HTTP(S) proxy"),
  })
  .strict();
export type CreateCredentialRequest = z.input<typeof CreateCredentialRequest>;

export const UpdateCredentialRequest = z.object({
  data: z
    .object({
      name: z.string().trim().min(1).max(100).optional(),
      apiKey: z.string().min(1).max(4096).optional(),
      isValid: z.boolean().optional(),
      proxy: z.boolean().optional(),
      id: z.never({ error: 'the id of a credential cannot be changed' }).optional(),
      provider: z.never({ error: 'the provider of a credential cannot be changed' }).optional(),
    })
    .strict(),
});
export type UpdateCredentialRequest = z.input<typeof UpdateCredentialRequest>;

export const Credential = z.object({
  id: z.string(),
  name: z.string(),
  provider: CredentialProvider,
  baseUrl: z.string().nullable().describe('The base URL with any user:password and query values masked as ****; stored encrypted'),
  proxy: z.boolean(),
  isValid: z.boolean().nullable(),
  apiKeyLast4: z.string().describe('The last four characters of the key'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Credential = z.output<typeof Credential>;

export const CredentialResponse = z.object({ success: z.literal(true), credential: Credential });
export type CredentialResponse = z.output<typeof CredentialResponse>;
export const ListCredentialsResponse = z.object({ success: z.literal(true), credentials: z.array(Credential) });
export type ListCredentialsResponse = z.output<typeof ListCredentialsResponse>;
