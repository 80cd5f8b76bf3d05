import { describe, expect, it } from 'vitest';

/**
 * The public surface of @agent-platform/adapters-vector: the names each entry exports. A change here is a change of
 * the package's API: review it, then update the snapshot (`vitest run -u`).
 */
describe('@agent-platform/adapters-vector exports', () => {
  it('.', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-vector')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_APPROXIMATE_THRESHOLD",
        "builtinVectorStore",
      ]
    `);
  });
  it('./builtin', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-vector/builtin')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_APPROXIMATE_THRESHOLD",
        "builtinVectorStore",
      ]
    `);
  });
  it('./qdrant', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-vector/qdrant')).sort()).toMatchInlineSnapshot(`
      [
        "createQdrantVectorStore",
        "parseQdrantConfig",
        "qdrantPointId",
        "upsertBatchSize",
      ]
    `);
  });
  it('./chroma', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-vector/chroma')).sort()).toMatchInlineSnapshot(`
      [
        "createChromaVectorStore",
        "parseChromaConfig",
      ]
    `);
  });
  it('./pinecone', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-vector/pinecone')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_PINECONE_ENDPOINT",
        "createPineconeVectorStore",
        "parsePineconeConfig",
      ]
    `);
  });
  it('./weaviate', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-vector/weaviate')).sort()).toMatchInlineSnapshot(`
      [
        "createWeaviateVectorStore",
        "parseWeaviateConfig",
      ]
    `);
  });
});
