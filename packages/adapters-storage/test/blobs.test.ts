import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBlobStore } from '@agent-platform/core/testing';
import { fileBlobStore, memoryBlobStore } from '../src/blobs/index.js';

describeBlobStore('memory', { create: () => memoryBlobStore() });

let dir = '';
describeBlobStore('files', {
  async create() {
    dir = await mkdtemp(join(tmpdir(), 'ap-blobs-'));
    return fileBlobStore({ dir: join(dir, 'blobs') });
  },
  cleanup: () => rm(dir, { recursive: true, force: true }),
});
