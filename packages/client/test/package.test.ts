import { describe, expect, it } from 'vitest';

/**
 * The public surface of @agent-platform/client: the names each entry exports. A change here is a change of
 * the package's API: review it, then update the snapshot (`vitest run -u`).
 */
describe('@agent-platform/client exports', () => {
  it('.', async () => {
    expect(Object.keys(await import('@agent-platform/client')).sort()).toMatchInlineSnapshot(`[]`);
  });
  it('./openai', async () => {
    expect(Object.keys(await import('@agent-platform/client/openai')).sort()).toMatchInlineSnapshot(`[]`);
  });
});
