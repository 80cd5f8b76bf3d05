import { APICallError } from '@ai-sdk/provider';

/** Most pages of the listing read (1,000 models each): a server that pages on forever is cut there. */
const MAX_PAGES = 20;

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/**
 * The chat models a Gemini API key can use, from `GET {baseURL}/models` (pages of
 * `{ models: [{ name: 'models/gemini-2.5-flash', supportedGenerationMethods: [...] }], nextPageToken }`):
 * the ids without `models/`, of the models that serve `generateContent` (embedding and other
 * models are left out). A failure is thrown as the AI SDK's `APICallError`, as a failed chat
 * call is, so one mapping turns both into `PlatformError`s.
 */
export async function listGoogleModels(fetch: typeof globalThis.fetch, baseURL: string, apiKey: string, signal?: AbortSignal): Promise<string[]> {
  const ids: string[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${baseURL}/models?pageSize=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`;
    const response = await fetch(url, { headers: { 'x-goog-api-key': apiKey }, ...(signal ? { signal } : {}) });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      throw new APICallError({
        message: String(member(member(body, 'error'), 'message') ?? `HTTP ${response.status}`),
        url,
        requestBodyValues: undefined,
        statusCode: response.status,
        responseHeaders: Object.fromEntries(response.headers),
        responseBody: text,
        data: body,
      });
    }
    const models = member(body, 'models');
    if (body === undefined || (models !== undefined && !Array.isArray(models))) {
      throw new APICallError({ message: 'The model listing is not a Gemini ListModelsResponse', url, requestBodyValues: undefined, statusCode: response.status, responseBody: text });
    }
    for (const model of (models as unknown[] | undefined) ?? []) {
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
