import { MODEL_PROVIDERS } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { PROVIDER_OPTIONS } from '../src/api/enums.js';
import { type JsonSchema, schemaProblems } from '../src/components/json-schema-check.js';

// The project form's check of provider options (the generated JSON Schemas of the contract)
// agrees with the service's (the registry's zod schemas) on what it accepts and refuses.

const VALUES: unknown[] = [
  {},
  { api: 'responses', reasoningEffort: 'low' },
  { api: 'soap' },
  { thinking: { type: 'enabled', budgetTokens: 2048 }, cacheControl: { type: 'ephemeral', ttl: '1h' }, sendReasoning: false },
  { thinking: { type: 'enabled', budgetTokens: 1000 } },
  { thinking: { type: 'enabled', budgetTokens: 2048.5 } },
  { thinking: { type: 'enabled' } },
  { thinking: { type: 'disabled', budgetTokens: 2048 } },
  { thinking: { type: 'sometimes' } },
  { cacheControl: { type: 'ephemeral', ttl: '2h' } },
  { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] },
  { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT' }] },
  { safetySettings: Array.from({ length: 11 }, () => ({ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'OFF' })) },
  { thinkingConfig: { thinkingBudget: -1, includeThoughts: true } },
  { thinkingConfig: { thinkingBudget: -2 } },
  { guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1', trace: 'enabled' } },
  { guardrailConfig: { guardrailIdentifier: '', guardrailVersion: '1' } },
  { reasoningConfig: { budgetTokens: 0 } },
  { additionalModelRequestFields: { top_k: 40, nested: { any: ['thing'] } } },
  { performanceConfig: {} },
  { serviceTier: 'flex', messages: [] },
  { reasoningEffort: 'medium' },
  [],
  'text',
  null,
];

describe('the provider options check of the project form', () => {
  it.each(Object.keys(PROVIDER_OPTIONS))('%s: accepts and refuses what the service does', (provider) => {
    const schema = PROVIDER_OPTIONS[provider as keyof typeof PROVIDER_OPTIONS] as JsonSchema;
    const service = MODEL_PROVIDERS[provider as keyof typeof MODEL_PROVIDERS].options;
    for (const value of VALUES) {
      const problems = schemaProblems(value, schema, 'providerOptions');
      expect(problems.length === 0, `${JSON.stringify(value).slice(0, 80)}: ${problems.join('; ')}`).toBe(service.safeParse(value).success);
      for (const problem of problems) expect(problem).toMatch(/^providerOptions(\.[\w.]+)?: /);
    }
  });
});
