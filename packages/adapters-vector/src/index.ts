export { type BuiltinVectorStore, type BuiltinVectorStoreOptions, builtinVectorStore } from './builtin/index.js';
