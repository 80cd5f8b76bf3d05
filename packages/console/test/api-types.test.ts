import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without type declarations.
import { ENUMS, generateApiEnums, generateApiTypes, TYPES } from '../scripts/generate-api.mjs';

describe("the console's API types", () => {
  it("are the ones generated from the server's OpenAPI contract (run pnpm --filter @agent-platform/console generate-api after a change)", async () => {
    const committed = await readFile(TYPES as string, 'utf8');
    expect(committed).toBe(await (generateApiTypes as () => Promise<string>)());
  }, 60_000);

  it("offer the enums of the server's OpenAPI contract to the forms (run pnpm --filter @agent-platform/console generate-api after a change)", async () => {
    const committed = await readFile(ENUMS as string, 'utf8');
    expect(committed).toBe(await (generateApiEnums as () => Promise<string>)());
  });
});
