import type { DocumentRecord, StorageAdapter } from '@agent-platform/core';

// One user, one project and one document (`user_1`, `proj_1`, `doc_1`), for tests of what a
// document's rows bring with them.

const at = new Date('2026-01-01T00:00:00.000Z');

export const documentRow: DocumentRecord = {
  id: 'doc_1',
  userId: 'user_1',
  projectId: 'proj_1',
  fileId: null,
  sourceKey: 'doc_1',
  fileName: 'a.txt',
  fileType: 'txt',
  sourceType: 'upload',
  status: 'completed',
  chunkCount: 0,
  vectorCount: 0,
  error: null,
  metadata: {},
  createdAt: at,
  updatedAt: at,
};

export async function withDocument(storage: StorageAdapter): Promise<void> {
  await storage.users.insert({ id: 'user_1', createdAt: at });
  await storage.projects.insert({
    id: 'proj_1',
    userId: 'user_1',
    name: 'p',
    description: '',
    instructions: '',
    icon: '',
    color: '',
    model: 'm',
    provider: 'openai',
    credentialId: null,
    providerOptions: null,
    createdAt: at,
    updatedAt: at,
  });
  await storage.documents.insert(documentRow);
}
