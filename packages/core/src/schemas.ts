export * from './schemas/auth.js';
export * from './schemas/common.js';
export * from './schemas/projects.js';
export * from './schemas/knowledge.js';
export * from './schemas/credentials.js';
export * from './schemas/chats.js';
export * from './schemas/completions.js';
export * from './schemas/local-models.js';
