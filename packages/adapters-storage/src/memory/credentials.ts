import type { CredentialRecord, CredentialRepository } from '@agent-platform/core';
import { clone, compareNewestFirst, insertUnique, patchRow, type Tables } from './tables.js';

/** The user's default credential of `provider` (the row itself, not a copy). */
function defaultCredential(t: Tables, userId: string, provider: string): CredentialRecord | undefined {
  for (const c of t.credentials.values()) if (c.userId === userId && c.provider === provider && c.isDefault) return c;
  return undefined;
}

/** Credentials in memory, at most one default per user and provider. */
export function memoryCredentials(tables: () => Tables): CredentialRepository {
  return {
    // No await between reading and writing: each call is atomic, as the contract asks.
    async insert(credential) {
      const t = tables();
      const current = defaultCredential(t, credential.userId, credential.provider);
      const isDefault = credential.isDefault === 'if-none' ? current === undefined : credential.isDefault;
      insertUnique(t.credentials, credential.id, clone({ ...credential, isDefault }), 'Credential');
      if (isDefault && current) t.credentials.set(current.id, { ...current, isDefault: false });
      return clone({ ...credential, isDefault });
    },
    async get(userId, id) {
      const c = tables().credentials.get(id);
      return c?.userId === userId ? clone(c) : undefined;
    },
    async list(userId) {
      return [...tables().credentials.values()]
        .filter((c) => c.userId === userId)
        .sort(compareNewestFirst)
        .map(clone);
    },
    async defaultOf(userId, provider) {
      const c = defaultCredential(tables(), userId, provider);
      return c && clone(c);
    },
    async update(userId, id, patch) {
      const t = tables();
      const row = t.credentials.get(id);
      const current = row?.userId === userId && patch.isDefault === true ? defaultCredential(t, userId, row.provider) : undefined;
      if (current && current.id !== id) t.credentials.set(current.id, { ...current, isDefault: false });
      return patchRow(t.credentials, id, patch, userId);
    },
    async delete(userId, id) {
      const t = tables();
      if (t.credentials.get(id)?.userId !== userId) return false;
      return t.credentials.delete(id);
    },
  };
}
