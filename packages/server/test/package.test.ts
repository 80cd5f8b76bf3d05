import { describe, expect, it } from 'vitest';

/**
 * The public surface of @agent-platform/server: the names each entry exports. A change here is a change of
 * the package's API: review it, then update the snapshot (`vitest run -u`).
 */
describe('@agent-platform/server exports', () => {
  it('.', async () => {
    expect(Object.keys(await import('@agent-platform/server')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_BODY_LIMIT",
        "STATUS_BY_CODE",
        "apiRoutes",
        "buildOpenApi",
        "createApp",
        "databasePath",
        "openPlatform",
        "publicRoutes",
        "readJsonBody",
        "route",
        "startServer",
        "toErrorResponse",
      ]
    `);
  });
});
