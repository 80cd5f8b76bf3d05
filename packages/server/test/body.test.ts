import { isPlatformError } from '@agent-platform/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readJsonBody } from '../src/body.js';

const post = (text: string) => new Request('http://in-process/', { method: 'POST', body: text });
const MiB = 1024 * 1024;

afterEach(() => vi.restoreAllMocks());

describe('readJsonBody', () => {
  it('refuses a body nested deeper than 64 levels before JSON.parse sees it', async () => {
    const parse = vi.spyOn(JSON, 'parse');
    for (const text of ['['.repeat(65) + ']'.repeat(65), `{"a":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_001)}`]) {
      const error = await readJsonBody(post(text), 16 * MiB).catch((caught: unknown) => caught);
      expect(isPlatformError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'invalid_request', message: 'body: nested deeper than 64 levels' });
    }
    expect(parse).not.toHaveBeenCalled();
  });

  it('parses a body exactly at the limit, and brackets inside strings do not count', async () => {
    const atLimit = '['.repeat(64) + ']'.repeat(64);
    expect(await readJsonBody(post(atLimit), MiB)).toEqual(JSON.parse(atLimit));
    const text = JSON.stringify({ content: `"${'['.repeat(100_000)}\\` });
    expect(await readJsonBody(post(text), MiB)).toEqual(JSON.parse(text));
  });
});
