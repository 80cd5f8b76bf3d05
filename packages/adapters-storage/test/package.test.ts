import { describe, expect, it } from 'vitest';

/**
 * The public surface of @agent-platform/adapters-storage: the names each entry exports. A change here is a change of
 * the package's API: review it, then update the snapshot (`vitest run -u`).
 */
describe('@agent-platform/adapters-storage exports', () => {
  it('.', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-storage')).sort()).toMatchInlineSnapshot(`
      [
        "fileBlobStore",
        "memoryBlobStore",
        "memoryStorage",
        "postgresStorage",
        "sqliteStorage",
      ]
    `);
  });
  it('./memory', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-storage/memory')).sort()).toMatchInlineSnapshot(`
      [
        "memoryStorage",
      ]
    `);
  });
  it('./sqlite', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-storage/sqlite')).sort()).toMatchInlineSnapshot(`
      [
        "sqliteStorage",
      ]
    `);
  });
  it('./postgres', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-storage/postgres')).sort()).toMatchInlineSnapshot(`
      [
        "NOTIFIER_APPLICATION_NAME",
        "postgresNotifier",
        "postgresStorage",
      ]
    `);
  });
  it('./blobs', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-storage/blobs')).sort()).toMatchInlineSnapshot(`
      [
        "checkBlobKey",
        "fileBlobStore",
        "memoryBlobStore",
      ]
    `);
  });
});
