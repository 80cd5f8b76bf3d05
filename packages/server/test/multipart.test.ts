import { randomBytes } from 'node:crypto';
import { isPlatformError } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { MAX_MULTIPART_FIELD_BYTES, MAX_MULTIPART_PARTS, readMultipartBody } from '../src/multipart.js';
import { postBody, trickle } from './trickle.js';

const MiB = 1024 * 1024;
const BOUNDARY = 'test-boundary-7d1f';
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** A multipart body written by hand, so tests control every byte (and can break it). */
function multipart(parts: ({ name: string; value: string } | { name: string; fileName: string; type?: string; bytes: Uint8Array })[], end = `--${BOUNDARY}--\r\n`): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      const type = part.type ? `Content-Type: ${part.type}\r\n` : '';
      pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.fileName}"\r\n${type}\r\n`));
      pieces.push(Buffer.from(part.bytes), Buffer.from('\r\n'));
    }
  }
  pieces.push(Buffer.from(end));
  return Buffer.concat(pieces);
}

const post = (body: BodyInit | ReadableStream<Uint8Array> | Uint8Array, headers: Record<string, string> = {}) => postBody(body, { 'content-type': TYPE, ...headers });

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isPlatformError(error), String(error)).toBe(true);
  return error as { code: string; message: string };
}

const files = (form: Record<string, unknown>) => form.files as { name: string; type: string; bytes: Uint8Array }[];
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('readMultipartBody', () => {
  it('reads text fields and several files, in order, with their names and types', async () => {
    const pdf = randomBytes(50_000);
    const body = multipart([
      { name: 'projectId', value: 'proj_1' },
      { name: 'files', fileName: 'manual.pdf', type: 'application/pdf', bytes: pdf },
      { name: 'files', fileName: 'dir/notes.txt', type: 'Text/Plain; charset=utf-8', bytes: Buffer.from('plain text') },
      { name: 'other', fileName: 'empty.md', bytes: new Uint8Array() },
      { name: 'note', value: 'ünïcödé' },
    ]);
    const form = await readMultipartBody(post(body), MiB);
    expect(Object.getPrototypeOf(form)).toBeNull();
    expect({ ...form, files: undefined }).toEqual({ projectId: 'proj_1', note: 'ünïcödé', files: undefined });
    expect(files(form).map(({ name, type }) => ({ name, type }))).toEqual([
      { name: 'manual.pdf', type: 'application/pdf' },
      { name: 'dir/notes.txt', type: 'text/plain' },
      { name: 'empty.md', type: 'text/plain' },
    ]);
    expect(same(files(form)[0]?.bytes as Uint8Array, pdf)).toBe(true);
    expect(Buffer.from(files(form)[1]?.bytes as Uint8Array).toString()).toBe('plain text');
    expect(files(form)[2]?.bytes.byteLength).toBe(0);
  });

  it('reads a form as a browser sends it (FormData)', async () => {
    const form = new FormData();
    form.set('projectId', 'proj_2');
    form.append('files', new Blob(['first file'], { type: 'text/markdown' }), 'a.md');
    form.append('files', new Blob([new Uint8Array([0, 1, 2, 255])]), 'b.bin');
    const read = await readMultipartBody(new Request('http://in-process/', { method: 'POST', body: form }), MiB);
    expect(read.projectId).toBe('proj_2');
    expect(files(read).map((f) => [f.name, f.type, [...f.bytes]])).toEqual([
      ['a.md', 'text/markdown', [...Buffer.from('first file')]],
      ['b.bin', 'application/octet-stream', [0, 1, 2, 255]],
    ]);
  });

  // One byte at a time up to 3 KB: every boundary, header and CRLF is split somewhere. With a
  // content-length the files are copied into one buffer as they come; without, joined at the end.
  it.each([
    ['with', true],
    ['without', false],
  ])('reads files that arrive in many small pieces, %s a content-length', async (_, declared) => {
    const big = randomBytes(300_000);
    const small = Buffer.from('a small file\r\n--not-the-boundary\r\n');
    const body = multipart([
      { name: 'files', fileName: 'big.pdf', bytes: big },
      { name: 'projectId', value: 'proj_3' },
      { name: 'files', fileName: 'small.txt', bytes: small },
    ]);
    let n = 0;
    const { stream, state } = trickle(body, () => (++n < 3000 ? 1 : 1 + (n % 4000)));
    const form = await readMultipartBody(post(stream, declared ? { 'content-length': String(body.length) } : {}), MiB);
    expect(state.sent).toBe(body.length);
    expect(form.projectId).toBe('proj_3');
    expect(files(form).map((f) => f.name)).toEqual(['big.pdf', 'small.txt']);
    expect(same(files(form)[0]?.bytes as Uint8Array, big)).toBe(true);
    expect(same(files(form)[1]?.bytes as Uint8Array, small)).toBe(true);
  });

  it('keeps fields named like members of Object.prototype as plain fields', async () => {
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'files'];
    const body = multipart([...names.map((name) => ({ name, value: `v-${name}` })), { name: 'files', fileName: 'a.txt', bytes: Buffer.from('x') }]);
    const form = await readMultipartBody(post(body), MiB);
    expect(Object.getPrototypeOf(form)).toBeNull();
    for (const name of names.filter((n) => n !== 'files')) expect(Object.getOwnPropertyDescriptor(form, name)?.value).toBe(`v-${name}`);
    // `files` is always the list of file parts, whatever a text field of that name said.
    expect(files(form).map((f) => f.name)).toEqual(['a.txt']);
    expect(({} as Record<string, unknown>).toString).toBe(Object.prototype.toString);
  });

  it.each([
    ['a body without its closing boundary', multipart([{ name: 'projectId', value: 'p' }], ''), /^Malformed multipart body: Unexpected end of multipart data$/],
    ['a body cut inside a file', multipart([{ name: 'files', fileName: 'a.txt', bytes: randomBytes(5000) }]).subarray(0, 3000), /^Malformed multipart body: /],
    ['a body that is not multipart at all', Buffer.from('{"projectId":"p"}'), /^Malformed multipart body: /],
    ['an empty body', Buffer.alloc(0), /^Malformed multipart body: /],
    ['a part without a name', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nv\r\n--${BOUNDARY}--\r\n`), /^Malformed multipart body: a field without a name$/],
  ])('answers 400 for %s', async (_, body, message) => {
    const error = await failure(readMultipartBody(post(body), MiB));
    expect(error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message) });
  });

  it('answers 400 for a content type without a boundary, or not multipart', async () => {
    const body = multipart([{ name: 'projectId', value: 'p' }]);
    expect(await failure(readMultipartBody(post(body, { 'content-type': 'multipart/form-data; charset=utf-8' }), MiB))).toMatchObject({
      code: 'invalid_request',
      message: 'Malformed multipart body: Multipart: Boundary not found',
    });
    expect(await failure(readMultipartBody(post(body, { 'content-type': 'application/json' }), MiB))).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^body: expected a multipart\/form-data body/),
    });
  });

  it(`refuses more than ${MAX_MULTIPART_PARTS} parts with 413 naming the limit, and stops reading there`, async () => {
    // 100,000 tiny parts: the parser must not walk them all (nor the reader read them all).
    const part = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"\r\n\r\nv\r\n`);
    const body = Buffer.concat([...Array.from({ length: 100_000 }, () => part), Buffer.from(`--${BOUNDARY}--\r\n`)]);
    const { stream, state } = trickle(body, () => 16 * 1024);
    const error = await failure(readMultipartBody(post(stream), 16 * MiB));
    expect(error).toMatchObject({ code: 'payload_too_large', message: `Multipart body has more than ${MAX_MULTIPART_PARTS} parts (fields and files together), over the limit` });
    expect(state.sent).toBeLessThan(body.length / 10);
    expect(state.cancelled).toBe(true);
    // As files too, and at the limit it is read.
    const asFiles = Array.from({ length: MAX_MULTIPART_PARTS + 1 }, (_, i) => ({ name: 'files', fileName: `${i}.txt`, bytes: Buffer.from('x') }));
    expect((await failure(readMultipartBody(post(multipart(asFiles)), MiB))).code).toBe('payload_too_large');
    expect(files(await readMultipartBody(post(multipart(asFiles.slice(1))), MiB))).toHaveLength(MAX_MULTIPART_PARTS);
  });

  it('refuses a text field over its limit with 413 naming the field and the limit', async () => {
    const body = multipart([{ name: 'projectId', value: 'x'.repeat(MAX_MULTIPART_FIELD_BYTES + 1) }]);
    expect(await failure(readMultipartBody(post(body), 16 * MiB))).toMatchObject({
      code: 'payload_too_large',
      message: `Multipart field "projectId" is larger than the limit of ${MAX_MULTIPART_FIELD_BYTES} bytes`,
    });
    const atLimit = multipart([{ name: 'projectId', value: 'x'.repeat(MAX_MULTIPART_FIELD_BYTES) }]);
    expect(((await readMultipartBody(post(atLimit), 16 * MiB)).projectId as string).length).toBe(MAX_MULTIPART_FIELD_BYTES);
  });

  it('refuses a body over the byte limit with 413 naming the limit, reading no further than the limit', async () => {
    const body = multipart([{ name: 'files', fileName: 'big.txt', bytes: randomBytes(3 * MiB) }]);
    const { stream, state } = trickle(body, () => 64 * 1024);
    const error = await failure(readMultipartBody(post(stream), MiB));
    expect(error).toMatchObject({ code: 'payload_too_large', message: `Request body is larger than the limit of ${MiB} bytes` });
    expect(state.sent).toBeLessThanOrEqual(MiB + 64 * 1024);
    expect(state.cancelled).toBe(true);
    // A declared length over the limit is refused before anything is read.
    const declared = trickle(body, () => 64 * 1024);
    expect((await failure(readMultipartBody(post(declared.stream, { 'content-length': String(body.length) }), MiB))).code).toBe('payload_too_large');
    expect(declared.state.sent).toBe(0);
  });

  // The old reader joined the body, parsed it whole (undici's FormData) and copied each file
  // out, all in microtasks once the bytes were there: ~400 ms of this thread for 16 MB here,
  // while nothing else ran. Now each piece is parsed as it is read, a file's pieces are copied
  // into one buffer as they come, and the loop turns every 20 ms of that work. The bound is
  // tolerant (a shared machine): 15-30 ms now, the old reader held it ~290 ms in this test.
  it('never holds the event loop long while a 16 MB body that has already arrived is parsed', async () => {
    const bytes = randomBytes(16 * MiB - 4096);
    const body = multipart([
      { name: 'projectId', value: 'proj_4' },
      { name: 'files', fileName: 'big.pdf', bytes },
    ]);
    // Queued in 64 KB chunks, as a socket hands them over while the server was busy elsewhere.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < body.length; at += 64 * 1024) controller.enqueue(body.slice(at, at + 64 * 1024));
        controller.close();
      },
    });
    const request = post(stream, { 'content-length': String(body.length) });
    let longest = 0;
    let last = performance.now();
    let spinning = true;
    const spin = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const form = await readMultipartBody(request, 16 * MiB);
    spinning = false;
    longest = Math.max(longest, performance.now() - last);
    expect(same(files(form)[0]?.bytes as Uint8Array, bytes)).toBe(true);
    expect(longest).toBeLessThan(150);
  });
});
