export { BUILTIN_EMBEDDING_DIMENSIONS, BUILTIN_EMBEDDING_MODEL, BUILTIN_SIMILARITY, type BuiltinEmbedderOptions, builtinEmbedder } from './builtin.js';
export { type OpenAIEmbedderOptions, openaiEmbedder } from './openai.js';
