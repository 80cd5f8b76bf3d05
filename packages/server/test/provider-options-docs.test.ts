import { readFileSync } from 'node:fs';
import { MODEL_PROVIDERS } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';

// The example of each provider's options that the registry carries (its schema's `examples`: the
// document and the console's project form show it) is the one docs/PROVIDERS.md's table gives,
// and the registry's own schema takes it.

const table =
  readFileSync(new URL('../../../docs/PROVIDERS.md', import.meta.url), 'utf8')
    .split('\n## Provider options\n')[1]
    ?.split('\n## ')[0] ?? '';
/** The table's example of each provider (the last cell of its row, a JSON object in backticks), or undefined when it has none. */
const documented = Object.fromEntries(
  table
    .split('\n')
    .map((line) => /^\|\s*`(\w+)`\s*\|.*\|\s*(?:`(\{.*\})`)?\s*\|$/.exec(line))
    .flatMap((m) => (m ? [[m[1] as string, m[2] ? JSON.parse(m[2]) : undefined]] : [])),
);

describe("providers' option examples", () => {
  it('are those of docs/PROVIDERS.md, for every provider with options, and fit the provider', () => {
    const withOptions = Object.entries(MODEL_PROVIDERS).filter(([, entry]) => Object.keys(entry.options.shape).length > 0);
    expect(withOptions.length).toBeGreaterThan(3);
    for (const [id, entry] of withOptions) {
      const examples = (entry.options.meta() as { examples?: unknown[] } | undefined)?.examples;
      expect(examples, id).toHaveLength(1);
      expect(documented[id], `docs/PROVIDERS.md has no example of ${id}`).toEqual(examples?.[0]);
      expect(entry.options.safeParse(examples?.[0]).success, id).toBe(true);
    }
  });
});
