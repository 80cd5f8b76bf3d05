export { DEFAULT_OLLAMA_HOST, type OllamaChatModelOptions, ollamaBaseURL, ollamaChatModel } from './ollama.js';
export { type OpenAIChatModelOptions, openaiChatModel } from './openai.js';
