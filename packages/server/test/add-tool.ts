import type { AgentTool, ToolSource } from '@agent-platform/core';

/**
 * A tool source made for tests: every project has an agent tool `add` ({ a, b } → a + b).
 * `calls` records the arguments of each run.
 */
export function addToolSource(): { source: ToolSource; calls: unknown[] } {
  const calls: unknown[] = [];
  const add: AgentTool = {
    definition: { name: 'add', description: 'Adds two numbers', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
    async run(args) {
      calls.push(args);
      const { a, b } = args as { a: number; b: number };
      return String(a + b);
    },
  };
  return { source: { tools: async () => [add] }, calls };
}
