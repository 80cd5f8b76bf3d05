import type { ChunkRecord, DocumentRecord, ProjectRecord, StorageAdapter } from '../storage/types.js';

/**
 * The adapter under test, as the domain parts of `describeStorageAdapter` reach it. `current()`
 * is the running test's adapter (fresh, with users `user_a` and `user_b`). `reopen()`, given for
 * adapters that persist (`options.reopen`), closes it and opens the same data again: the reopened
 * adapter is the test's from then on, and the one closed after it.
 */
export interface StorageUnderTest {
  current(): StorageAdapter;
  readonly reopen?: () => Promise<StorageAdapter>;
}

const t0 = Date.parse('2026-01-01T00:00:00.000Z');
export const at = (seconds: number) => new Date(t0 + seconds * 1000);

export function project(userId: string, n: number, overrides: Partial<ProjectRecord> = {}): ProjectRecord {
  return {
    id: `proj_${String(n).padStart(6, '0')}`,
    userId,
    name: `Project ${n}`,
    description: '',
    instructions: '',
    icon: '',
    color: '',
    model: 'gpt-4o-mini',
    provider: 'openai',
    credentialId: null,
    providerOptions: null,
    createdAt: at(n),
    updatedAt: at(n),
    ...overrides,
  };
}

export function document(userId: string, projectId: string, n: number, overrides: Partial<DocumentRecord> = {}): DocumentRecord {
  const id = `doc_${String(n).padStart(6, '0')}`;
  return {
    id,
    userId,
    projectId,
    fileId: null,
    sourceKey: id,
    fileName: `file${n}.md`,
    fileType: 'md',
    sourceType: 'upload',
    status: 'pending',
    chunkCount: 0,
    vectorCount: 0,
    error: null,
    metadata: { size: 10 * n },
    createdAt: at(n),
    updatedAt: at(n),
    ...overrides,
  };
}

export function chunk(documentId: string, projectId: string, index: number, text: string): ChunkRecord {
  return {
    id: `chunk_${documentId}_${index}`,
    documentId,
    projectId,
    index,
    text,
    tokenCount: text.split(' ').length,
    metadata: { fileName: 'f.md', chunkIndex: index, section: 'Intro' },
  };
}
