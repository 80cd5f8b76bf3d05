/**
 * OpenAI-compatible services: not providers of their own, but the `openai` provider with their
 * base URL (docs/PROVIDERS.md, "OpenAI-compatible services"). Declared once: the credential's
 * `baseUrl` offers them as examples in the API document (and so to the console and API
 * clients), and docs/PROVIDERS.md's table lists exactly these (checked by a test). Append a
 * service at the end; its URL must be the one the service documents.
 */
export interface OpenAICompatibleService {
  /** The service as people name it, e.g. `Mistral`. */
  readonly name: string;
  /** Its OpenAI-compatible base URL (the one `openai`'s `baseUrl` takes). */
  readonly baseUrl: string;
}

export const OPENAI_COMPATIBLE_SERVICES = [
  { name: 'Mistral', baseUrl: 'https://api.mistral.ai/v1' },
  { name: 'Groq', baseUrl: 'https://api.groq.com/openai/v1' },
  { name: 'DeepSeek', baseUrl: 'https://api.deepseek.com' },
  { name: 'xAI', baseUrl: 'https://api.x.ai/v1' },
  { name: 'OpenRouter', baseUrl: 'https://openrouter.ai/api/v1' },
  { name: 'Together AI', baseUrl: 'https://api.together.ai/v1' },
  { name: 'Fireworks AI', baseUrl: 'https://api.fireworks.ai/inference/v1' },
  { name: 'vLLM', baseUrl: 'http://HOST:8000/v1' },
  { name: 'LM Studio', baseUrl: 'http://localhost:1234/v1' },
  { name: 'Cerebras', baseUrl: 'https://api.cerebras.ai/v1' },
] as const satisfies readonly OpenAICompatibleService[];
