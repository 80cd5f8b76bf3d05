export { type BuiltinVectorStore, type BuiltinVectorStoreOptions, builtinVectorStore, DEFAULT_APPROXIMATE_THRESHOLD } from './builtin/index.js';
