import { randomBytes } from 'node:crypto';
import { isPlatformError } from '@agent-platform/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readBody, readJsonBody } from '../src/body.js';
import { postBody, trickle } from './trickle.js';

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

/** Counts turns of the event loop (setImmediate callbacks) until `stop()`. */
function countTurns() {
  let turns = 0;
  let spinning = true;
  const spin = () => {
    if (!spinning) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  return () => {
    spinning = false;
    return turns;
  };
}

describe('readBody', () => {
  const trickled = (bytes: Uint8Array, size: number, headers: Record<string, string> = {}) => {
    const { stream, state } = trickle(bytes, () => size);
    return { request: postBody(stream, headers), state };
  };

  it.each([
    ['with', true],
    ['without', false],
  ])('returns the bytes of a body of many chunks, %s a content-length', async (_, declared) => {
    const bytes = randomBytes(MiB + 12_345);
    const { request } = trickled(bytes, 10_000, declared ? { 'content-length': String(bytes.length) } : {});
    expect((await readBody(request, 2 * MiB)).equals(bytes)).toBe(true);
  });

  // In-process a header can say anything: bytes past the announced size leave the one buffer for
  // a list joined at the end, and a body shorter than announced is just shorter.
  it.each([
    ['less', 100_000],
    ['more', 900_000],
  ])('returns every byte of a body that announces %s than it sends', async (_, declared) => {
    const bytes = randomBytes(500_000);
    const { request } = trickled(bytes, 30_000, { 'content-length': String(declared) });
    expect((await readBody(request, MiB)).equals(bytes)).toBe(true);
  });

  it('stops at the limit: 413 naming it, nothing read past it, the rest cancelled', async () => {
    const { request, state } = trickled(randomBytes(4 * MiB), 64 * 1024);
    const error = await readBody(request, MiB).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'payload_too_large', message: `Request body is larger than the limit of ${MiB} bytes` });
    expect(state.sent).toBeLessThanOrEqual(MiB + 64 * 1024);
    expect(state.cancelled).toBe(true);
  });
});

describe('readJsonBody of a big document', () => {
  // The old reader decoded, scanned and parsed a body that had arrived in one run of
  // microtasks: 60-100 ms for 4 MB here, while nothing else (GET /health) could run. Now the
  // loop turns between those steps once 20 ms went by without a turn. 8 MB: over 100 ms of
  // that work here, so it needs several turns on any machine.
  it('lets the event loop turn while an 8 MB document is decoded, scanned and parsed', async () => {
    const document = { projectId: 'proj_1', fileName: 'h.md', fileType: 'md', sourceType: 'upload', content: '# h\n'.repeat(2 * MiB) };
    const text = JSON.stringify(document);
    const request = post(text);
    const stop = countTurns();
    const value = await readJsonBody(request, 16 * MiB);
    expect(stop()).toBeGreaterThan(0);
    expect(value).toEqual(document);
  });
});

describe('a body cut off by the client', () => {
  it('is a 400 naming what happened, not a server error', async () => {
    // A stream that gives some bytes and then fails, as a request body does when its client
    // closes the connection mid-body.
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(new TextEncoder().encode('{"content":"'));
        } else {
          controller.error(new Error('aborted'));
        }
      },
    });
    const request = new Request('http://in-process/', { method: 'POST', body, duplex: 'half' } as RequestInit);
    const error = await readJsonBody(request, MiB).catch((caught: unknown) => caught);
    expect(isPlatformError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'invalid_request', message: 'The request body ended before it was complete: aborted' });
  });
});
