export { BUILTIN_EMBEDDING_DIMENSIONS, BUILTIN_EMBEDDING_MODEL, type BuiltinEmbedderOptions, builtinEmbedder } from './builtin.js';
export { type OpenAIEmbedderOptions, openaiEmbedder } from './openai.js';
