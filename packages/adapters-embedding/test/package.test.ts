import { describe, expect, it } from 'vitest';

/**
 * The public surface of @agent-platform/adapters-embedding: the names each entry exports. A change here is a change of
 * the package's API: review it, then update the snapshot (`vitest run -u`).
 */
describe('@agent-platform/adapters-embedding exports', () => {
  it('.', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-embedding')).sort()).toMatchInlineSnapshot(`
      [
        "BUILTIN_EMBEDDING_DIMENSIONS",
        "BUILTIN_EMBEDDING_MODEL",
        "BUILTIN_SIMILARITY",
        "builtinEmbedder",
        "openaiEmbedder",
      ]
    `);
  });
  it('./builtin', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-embedding/builtin')).sort()).toMatchInlineSnapshot(`
      [
        "BUILTIN_EMBEDDING_DIMENSIONS",
        "BUILTIN_EMBEDDING_MODEL",
        "BUILTIN_SIMILARITY",
        "DEFAULT_MAX_WORKERS",
        "builtinEmbedder",
        "clipText",
      ]
    `);
  });
  it('./openai', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-embedding/openai')).sort()).toMatchInlineSnapshot(`
      [
        "openaiEmbedder",
      ]
    `);
  });
  it('./transformers', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-embedding/transformers')).sort()).toMatchInlineSnapshot(`
      [
        "downloadHubModel",
        "hubModelFolder",
        "isHubModelCached",
        "readModelFolder",
        "transformersEmbedder",
        "transformersHubEmbedder",
      ]
    `);
  });
});
