import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPENAI_COMPATIBLE_SERVICES } from '../src/registries/openai-compatible.js';
import { CreateCredentialRequest } from '../src/schemas/credentials.js';

const DOCS = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/PROVIDERS.md');

/** The rows of docs/PROVIDERS.md's "OpenAI-compatible services" table: service and base URL. */
function documentedServices(): { name: string; baseUrl: string }[] {
  const text = readFileSync(DOCS, 'utf8');
  const section = text.slice(text.indexOf('## OpenAI-compatible services'));
  const table = section.slice(0, section.indexOf('\n## '));
  return [...table.matchAll(/^\| ([^|]+?) +\| `([^`]+)` +\|/gm)].map((m) => ({ name: m[1]!, baseUrl: m[2]! }));
}

describe('the OpenAI-compatible services (registries/openai-compatible.ts)', () => {
  it('are the rows of docs/PROVIDERS.md’s table, in order, with the same base URLs', () => {
    expect(documentedServices()).toEqual(OPENAI_COMPATIBLE_SERVICES.map(({ name, baseUrl }) => ({ name, baseUrl })));
  });

  it('are the examples of a credential’s baseUrl in the API document', () => {
    const schema = CreateCredentialRequest.toJSONSchema() as { oneOf?: { properties?: { baseUrl?: { examples?: unknown } } }[] };
    const examples = (schema.oneOf ?? []).map((member) => member.properties?.baseUrl?.examples);
    expect(examples.length).toBeGreaterThan(0);
    for (const found of examples) expect(found).toEqual(OPENAI_COMPATIBLE_SERVICES.map((service) => service.baseUrl));
  });
});
