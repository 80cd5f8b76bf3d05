import { randomBytes } from 'node:crypto';

/** Prefixes of identifiers by resource kind (the spec's examples, followed everywhere). */
export const ID_PREFIXES = {
  user: 'user',
  key: 'key',
  project: 'proj',
  document: 'doc',
  file: 'file',
  chunk: 'chunk',
  tool: 'tool',
  chat: 'chat',
  stream: 'stream',
  mcpServer: 'mcp',
  credential: 'cred',
  job: 'job',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/**
 * True when `value` has the form of an id of `kind` (`proj_` + letters and digits for a
 * project), whether or not such a resource exists: lets a caller tell "an id that is not
 * yours" from a name of another kind (a model name).
 */
export function hasIdForm(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return value.startsWith(prefix) && /^[0-9a-z]+$/i.test(value.slice(prefix.length));
}

/** Makes identifiers; injectable for deterministic tests. */
export interface IdGenerator {
  /** A new unique id of the kind, `<prefix>_<opaque>`. */
  next(kind: IdKind): string;
}

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** `length` characters of [0-9a-z], uniformly random (rejection sampling, no modulo bias). */
export function randomString(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 252) out += ALPHABET[byte % 36];
      if (out.length === length) break;
    }
  }
  return out;
}

/**
 * Ids are `prefix_` + 9 base-36 digits of milliseconds + 3 of a per-millisecond counter + 10
 * random characters: they sort by creation time within one process and are unguessable.
 */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  let lastMs = 0;
  let counter = 0;
  return {
    next(kind) {
      let ms = now();
      if (ms <= lastMs) {
        ms = lastMs;
        counter++;
        if (counter >= 36 ** 3) {
          ms = lastMs + 1;
          counter = 0;
        }
      } else {
        counter = 0;
      }
      lastMs = ms;
      const time = ms.toString(36).padStart(9, '0');
      const seq = counter.toString(36).padStart(3, '0');
      return `${ID_PREFIXES[kind]}_${time}${seq}${randomString(10)}`;
    },
  };
}
