import { z } from 'zod';
import { CredentialProvider } from './credentials.js';

export const DefaultModelsQuery = z.object({
  provider: CredentialProvider.describe('The provider whose models to list'),
});
export type DefaultModelsQuery = z.input<typeof DefaultModelsQuery>;

export const ProviderModelsResponse = z.object({
  success: z.literal(true),
  provider: CredentialProvider,
  credentialId: z.string().nullable().describe('The credential the list was asked with, or null (the server environment)'),
  baseUrl: z.string().nullable().describe('Where the list was asked, without user:password or query values'),
  models: z.array(z.object({ id: z.string().describe('The name a project gives as model') })).describe('Sorted by id (for Ollama: its installed models)'),
});
export type ProviderModelsResponse = z.output<typeof ProviderModelsResponse>;
