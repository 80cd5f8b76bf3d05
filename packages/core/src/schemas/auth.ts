import { z } from 'zod';
import { offsetPaging, Timestamp } from './common.js';

export const CreateKeyRequest = z.object({
  name: z.string().trim().min(1).max(100).describe('A label for the key'),
});
export type CreateKeyRequest = z.input<typeof CreateKeyRequest>;

export const CreateKeyResponse = z.object({
  success: z.literal(true),
  key: z.string().describe('The API key. Shown only in this response.'),
  id: z.string(),
  name: z.string(),
  userId: z.string().describe('The user the key belongs to. An operator makes another key for this user with `agent-platform keys create --user <userId>`.'),
  createdAt: Timestamp,
});
export type CreateKeyResponse = z.output<typeof CreateKeyResponse>;

export const ApiKeySummary = z.object({
  id: z.string(),
  name: z.string(),
  /** The public start of the key, to tell keys apart. */
  prefix: z.string(),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
});
export type ApiKeySummary = z.output<typeof ApiKeySummary>;

/** `GET /api/auth/keys`: `limit` (1-100, default 20) and `offset`, as the other lists. */
export const ListKeysQuery = z.object({ ...offsetPaging });
export type ListKeysQuery = z.input<typeof ListKeysQuery>;

export const ListKeysResponse = z.object({
  success: z.literal(true),
  userId: z.string().describe('The user the keys belong to (the caller)'),
  keys: z.array(ApiKeySummary).describe('A page of the keys, newest first'),
  nextOffset: z.number().int().describe('The offset of the next page'),
  hasMore: z.boolean().describe('Whether keys follow this page'),
  total: z.number().int().describe("The user's keys in all"),
});
export type ListKeysResponse = z.output<typeof ListKeysResponse>;
