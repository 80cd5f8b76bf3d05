import { z } from 'zod';
import { MODEL_PROVIDER_IDS, MODEL_PROVIDERS, providerOptionsIssues } from '../registries/model-providers.js';
import { offsetPaging, Timestamp } from './common.js';

/** The model providers (registries/model-providers.ts). */
export const Provider = z.enum(MODEL_PROVIDER_IDS).describe('Model provider of the agent');

const name = z.string().trim().min(1).max(200);
const model = z.string().trim().min(1).max(200);
const description = z.string().max(2000).describe('What the project is for, shown to people; never sent to the model');
/** Most characters of a project's `instructions` (400 past it). */
export const MAX_INSTRUCTIONS = 32_000;
const instructions = z
  .string()
  .max(MAX_INSTRUCTIONS, { message: `at most ${MAX_INSTRUCTIONS} characters` })
  .describe(`The agent's system prompt: sent to the model at the start of every turn (at most ${MAX_INSTRUCTIONS} characters; empty: none)`);
const icon = z.string().max(200);
const color = z.string().max(50).describe('Colour code, e.g. #3b82f6');
const credentialId = z.string().trim().min(1).max(200).nullable().describe("One of the caller's credentials, of the project's provider, that the agent's model calls use (null: none named)");

/** A project's provider options: its provider's own (docs/PROVIDERS.md), checked against the provider's registry entry. */
export const ProviderOptions = z
  .record(z.string(), z.unknown())
  .describe(
    `The provider's own options, as its registry entry takes them (a key it does not take is a 400 naming it): ${MODEL_PROVIDER_IDS.map((id) => `${id}: ${Object.keys(MODEL_PROVIDERS[id].options.shape).join(', ') || 'none'}`).join('; ')}`,
  );

/**
 * The provider options a request may give, documented with each provider's options as a JSON
 * Schema (the document's `x-provider-options`, by provider, with its examples): what a client
 * can check before sending. The service checks them with the same registry schemas.
 */
const ProviderOptionsInput = ProviderOptions.meta({
  'x-provider-options': Object.fromEntries(
    MODEL_PROVIDER_IDS.map((id) => {
      const { $schema: _, ...schema } = z.toJSONSchema(MODEL_PROVIDERS[id].options, { io: 'input' });
      return [id, schema];
    }),
  ),
});

/** The options given with a provider, checked against it. */
const optionsFit = (body: { provider?: string | undefined; providerOptions?: Record<string, unknown> | null | undefined }, ctx: z.RefinementCtx) => {
  if (body.provider === undefined || !body.providerOptions) return;
  for (const issue of providerOptionsIssues(body.provider, body.providerOptions, ['providerOptions'])) ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message });
};

export const CreateProjectRequest = z
  .object({
    name,
    model,
    provider: Provider,
    description: description.optional(),
    instructions: instructions.optional(),
    icon: icon.optional(),
    color: color.optional(),
    credentialId: credentialId.optional(),
    providerOptions: ProviderOptionsInput.nullable().optional(),
  })
  .superRefine(optionsFit);
export type CreateProjectRequest = z.input<typeof CreateProjectRequest>;

export const UpdateProjectRequest = z
  .object({
    name: name.optional(),
    model: model.optional(),
    provider: Provider.optional(),
    description: description.optional(),
    instructions: instructions.optional(),
    icon: icon.optional(),
    color: color.optional(),
    credentialId: credentialId.optional().describe('A credential of the caller to use, or null to name none'),
    providerOptions: ProviderOptionsInput.nullable().optional().describe("New provider options (replacing the project's), or null for none"),
  })
  .strict()
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), {
    message: 'at least one field to change is required',
  })
  .superRefine(optionsFit);
export type UpdateProjectRequest = z.input<typeof UpdateProjectRequest>;

export const Project = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  instructions: z.string().describe("The agent's system prompt (empty: none)"),
  icon: z.string(),
  color: z.string(),
  model: z.string(),
  provider: Provider,
  credentialId: z.string().nullable().describe('The credential the project names, or null'),
  providerOptions: ProviderOptions.nullable().describe("The provider's own options, or null for none"),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Project = z.output<typeof Project>;

/** Where the precedence of credentials takes a project's model calls (docs/API.md, "Credentials"). */
export const CredentialSource = z
  .enum(['project', 'default', 'environment'])
  .describe(
    "project: the credential the project names; default: the caller's default credential of the provider; environment: none of the caller's, the operator's environment (OPENAI_API_KEY / OPENAI_BASE_URL, OLLAMA_HOST)",
  );

export const ResolvedProvider = z.object({
  credentialId: z.string().nullable().describe('The credential used, or null (the environment)'),
  baseUrl: z.string().nullable().describe('Where the calls go, without user:password or query values; null when not known'),
  source: CredentialSource,
});
export type ResolvedProvider = z.output<typeof ResolvedProvider>;

/** A project as one project's routes answer it: with where its model calls go. */
export const ProjectDetail = Project.extend({
  resolved: ResolvedProvider.describe("Which credential and base URL the agent's model calls use now (never the key)"),
});
export type ProjectDetail = z.output<typeof ProjectDetail>;

export const ProjectResponse = z.object({ success: z.literal(true), project: ProjectDetail });
export type ProjectResponse = z.output<typeof ProjectResponse>;

export const ListProjectsQuery = z.object({
  searchWord: z.string().max(200).optional().describe('Case-insensitive part of the name'),
  ...offsetPaging,
  cursor: z.string().max(500).optional().describe('nextCursor of the previous page; takes precedence over offset'),
});
export type ListProjectsQuery = z.input<typeof ListProjectsQuery>;

export const ListProjectsResponse = z.object({
  success: z.literal(true),
  projects: z.array(Project),
  nextCursor: z.string().describe('Cursor of the next page; empty when there is none'),
  nextOffset: z.number().int().describe('Offset of the next page'),
  hasMore: z.boolean(),
  total: z.number().int().describe('Projects matching searchWord'),
  message: z.string(),
});
export type ListProjectsResponse = z.output<typeof ListProjectsResponse>;
