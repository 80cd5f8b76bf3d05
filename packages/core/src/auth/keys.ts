import { createHash, timingSafeEqual } from 'node:crypto';
import { randomString } from '../ids.js';
import type { ApiKeySummary } from '../schemas/auth.js';
import type { ApiKeyRecord } from '../storage/types.js';

/** Every key starts with this, so secret scanners and people recognise it. */
export const KEY_PREFIX = 'ap_';
const LOOKUP_LENGTH = 12;
const SECRET_LENGTH = 32; // 32 base-36 characters ≈ 165 bits

export interface NewKey {
  /** The whole key, shown to the caller once. */
  readonly key: string;
  /** Public part stored in clear to find the key's record. */
  readonly lookup: string;
  /** SHA-256 of the whole key (hex); the only form of the secret that is stored. */
  readonly hash: string;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateKey(): NewKey {
  const lookup = randomString(LOOKUP_LENGTH);
  const key = `${KEY_PREFIX}${lookup}${randomString(SECRET_LENGTH)}`;
  return { key, lookup, hash: hashKey(key) };
}

/** The lookup part of a well-formed key, or undefined. */
export function keyLookup(key: string): string | undefined {
  if (key.length !== KEY_PREFIX.length + LOOKUP_LENGTH + SECRET_LENGTH || !key.startsWith(KEY_PREFIX)) return undefined;
  const lookup = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + LOOKUP_LENGTH);
  return /^[0-9a-z]+$/.test(lookup) ? lookup : undefined;
}

/** Compares a presented key with a stored hash in constant time. */
export function keyMatches(key: string, storedHash: string): boolean {
  const a = Buffer.from(hashKey(key), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What is shown of a key after creation: the prefix and lookup part. */
export function displayPrefix(lookup: string): string {
  return `${KEY_PREFIX}${lookup}`;
}

/** How answers show a stored key: its id, name, public prefix and times, never its secret or hash. */
export function keySummary(record: ApiKeyRecord): ApiKeySummary {
  return {
    id: record.id,
    name: record.name,
    prefix: displayPrefix(record.lookup),
    createdAt: record.createdAt.toISOString(),
    lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
  };
}
