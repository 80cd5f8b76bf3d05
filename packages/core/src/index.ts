export { displayPrefix, generateKey, hashKey, KEY_PREFIX, keyLookup, keyMatches, type NewKey } from './auth/keys.js';
export { type Clock, systemClock } from './clock.js';
export { type ErrorCode, isPlatformError, PlatformError, type PlatformErrorOptions, type ValidationIssue } from './errors.js';
export { createIdGenerator, ID_PREFIXES, type IdGenerator, type IdKind, randomString } from './ids.js';
export { AgentPlatform, type AgentPlatformOptions, type Caller } from './platform.js';
export { decodeCursor, encodeCursor, toProject } from './projects.js';
export * from './schemas.js';
export type * from './storage/types.js';
export { parseInput } from './validation.js';
