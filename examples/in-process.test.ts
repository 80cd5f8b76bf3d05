import { expect, it } from 'vitest';
import { main } from './in-process.js';

it('the in-process example runs and prints what it did', async () => {
  const lines: string[] = [];
  await main((line) => lines.push(line));
  expect(lines[0]).toMatch(/^created proj_\w+ \(Support bot\)$/);
  expect(lines[1]).toBe('found 1: Support bot — Answers questions about our product');
  expect(lines[2]).toMatch(/^rejected: invalid_request: name: /);
});
