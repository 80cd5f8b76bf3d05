import { PlatformError } from '@agent-platform/core';
import { getJson } from '../ai-sdk/index.js';

/** Most pages of the listing read (1,000 models each): a server that pages on forever is cut there. */
const MAX_PAGES = 20;

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/**
 * The chat models a Gemini API key can use, from `GET {baseURL}/models` (pages of
 * `{ models: [{ name: 'models/gemini-2.5-flash', supportedGenerationMethods: [...] }], nextPageToken }`):
 * the ids without `models/`, of the models that serve `generateContent` (embedding and other
 * models are left out). A refusal fails as a chat call's does (`getJson`).
 */
export async function listGoogleModels(
  fetch: typeof globalThis.fetch,
  server: { readonly baseURL: string; readonly apiKey: string; readonly where: string; readonly details: Record<string, unknown> },
  signal?: AbortSignal,
): Promise<string[]> {
  const ids: string[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${server.baseURL}/models?pageSize=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
    const body = await getJson(fetch, url, { 'x-goog-api-key': server.apiKey }, signal);
    const models = member(body, 'models') ?? (typeof body === 'object' && body !== null ? [] : undefined);
    if (!Array.isArray(models)) {
      throw new PlatformError('upstream_error', `${server.where} answered GET /models with an unexpected shape`, { details: server.details });
    }
    for (const model of models) {
      const name = member(model, 'name');
      const methods = member(model, 'supportedGenerationMethods');
      if (typeof name === 'string' && Array.isArray(methods) && methods.includes('generateContent')) ids.push(name.replace(/^models\//, ''));
    }
    const next = member(body, 'nextPageToken');
    if (typeof next !== 'string' || next === '') break;
    pageToken = next;
  }
  return ids;
}
