import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { onPostgres, startTestServer, type TestServer } from './helpers.js';

// A chat's stored images served back to its owner (GET /api/chats/{chatId}/images/{ref}) by the
// built server over HTTP, the model the loopback OpenAI fake: the bytes with their type, length,
// strong ETag and private caching, 304 on If-None-Match, headers that keep an image an image,
// 404 for everything that is not the caller's image of that chat, and on PostgreSQL the image
// read through another instance on the same database.

/** A real 1x1 PNG, and a GIF and a JPEG by their first bytes. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(20, 1)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(20, 3)]);

let fake: FakeChatServer;
let s: TestServer;
let projectId: string;

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream' } });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Vision', model: 'gpt-4o', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

/** A chat whose first user message carried these images (declared as PNG: the service tells the type by the bytes); answers its id and the refs its history names. */
async function chatWith(images: Buffer[]): Promise<{ chatId: string; refs: string[] }> {
  const chatId = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat.id as string;
  const content = [{ type: 'text', text: 'What is this?' }, ...images.map((b) => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${b.toString('base64')}` } }))];
  const answered = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'user', content }] } });
  expect(answered.status, JSON.stringify(answered.body)).toBe(200);
  const { messages } = (await s.call('GET', `/api/chats/${chatId}/messages`)).body;
  const refs = (messages[0].parts as { type: string; ref?: string }[]).filter((p) => p.type === 'image').map((p) => p.ref as string);
  expect(refs).toHaveLength(images.length);
  return { chatId, refs };
}

const get = (path: string, options: { key?: string | null; headers?: Record<string, string> } = {}) => {
  const key = options.key === undefined ? s.keyA : options.key;
  return fetch(s.url + path, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...options.headers } });
};
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());

describe('GET /api/chats/{chatId}/images/{ref}', () => {
  it("answers a stored image's bytes with its type, length, strong ETag, private caching and headers that keep it an image", async () => {
    const { chatId, refs } = await chatWith([PNG, GIF, JPEG]);
    const types = [];
    for (const [i, bytes] of [PNG, GIF, JPEG].entries()) {
      const res = await get(`/api/chats/${chatId}/images/${refs[i]}`);
      expect(res.status).toBe(200);
      expect(await bytesOf(res)).toEqual(bytes);
      expect(res.headers.get('content-length')).toBe(String(bytes.byteLength));
      expect(res.headers.get('etag')).toBe(`"${refs[i]}"`);
      expect(res.headers.get('cache-control')).toBe('private, max-age=86400');
      expect(res.headers.get('vary')).toBe('Authorization');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      types.push(res.headers.get('content-type'));
      expect(res.headers.get('content-disposition')).toBe(`inline; filename="${refs[i]}.${(res.headers.get('content-type') as string).slice(6)}"`);
    }
    // Told by the bytes, not by the data: URL that said PNG for all three.
    expect(types).toEqual(['image/png', 'image/gif', 'image/jpeg']);
  });

  it('answers 304 without the bytes when If-None-Match names them (strong or weak, or in a list), and the bytes otherwise', async () => {
    const { chatId, refs } = await chatWith([PNG]);
    const path = `/api/chats/${chatId}/images/${refs[0]}`;
    for (const tag of [`"${refs[0]}"`, `W/"${refs[0]}"`, `"other", "${refs[0]}"`, '*']) {
      const res = await get(path, { headers: { 'if-none-match': tag } });
      expect(res.status, tag).toBe(304);
      expect(res.headers.get('etag')).toBe(`"${refs[0]}"`);
      expect(res.headers.get('cache-control')).toBe('private, max-age=86400');
      expect((await bytesOf(res)).byteLength).toBe(0);
    }
    const changed = await get(path, { headers: { 'if-none-match': '"0000"' } });
    expect(changed.status).toBe(200);
    expect(await bytesOf(changed)).toEqual(PNG);
  });

  it("is 404 for an unknown ref, a ref with path characters, another chat's ref, another user's chat and a deleted chat; 401 without a key", async () => {
    const first = await chatWith([PNG]);
    const second = await chatWith([GIF]);
    const ref = first.refs[0] as string;
    const notFound = async (path: string, key?: string) => {
      const res = await get(path, key ? { key } : {});
      const body = await res.json();
      expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(404);
      expect(body).toMatchObject({ success: false, code: 'not_found' });
      expect(res.headers.get('content-type')).toContain('application/json');
    };
    await notFound(`/api/chats/${first.chatId}/images/${'0'.repeat(64)}`);
    await notFound(`/api/chats/${first.chatId}/images/${ref.toUpperCase()}`);
    for (const hostile of ['..%2F..%2Fagent-platform.db', '%2E%2E', `..%2Fchatimg-${ref}`, `${ref}%00`, `${ref}.png`]) {
      await notFound(`/api/chats/${first.chatId}/images/${hostile}`);
    }
    // Each chat keeps its own copy: the first chat's ref is not the second chat's image.
    await notFound(`/api/chats/${second.chatId}/images/${ref}`);
    // Another user's chat (with the right ref): as unknown as any other id.
    await notFound(`/api/chats/${first.chatId}/images/${ref}`, s.keyB);
    expect((await get(`/api/chats/${first.chatId}/images/${ref}`, { key: null })).status).toBe(401);
    // Deleting the chat takes its images.
    expect((await s.call('DELETE', `/api/chats/${first.chatId}`)).status).toBe(200);
    await notFound(`/api/chats/${first.chatId}/images/${ref}`);
    expect((await get(`/api/chats/${second.chatId}/images/${second.refs[0]}`)).status).toBe(200);
  });

  it('reads through the library: chatImage(caller, chatId, ref) answers the bytes and type, and refuses another user', async () => {
    const { chatId, refs } = await chatWith([GIF]);
    const a = await s.platform.authenticate(s.keyA);
    const b = await s.platform.authenticate(s.keyB);
    if (!a || !b) throw new Error('the test keys do not authenticate');
    const image = await s.platform.chatImage(a, chatId, refs[0] as string);
    expect({ ref: image.ref, mediaType: image.mediaType, bytes: Buffer.from(image.bytes) }).toEqual({ ref: refs[0], mediaType: 'image/gif', bytes: GIF });
    await expect(s.platform.chatImage(b, chatId, refs[0] as string)).rejects.toMatchObject({ code: 'not_found' });
  });

  it.runIf(onPostgres)('serves an image written through one instance from another instance on the same database', async () => {
    const { chatId, refs } = await chatWith([JPEG]);
    const peer = await s.peer();
    if (!peer) throw new Error('PostgreSQL mode starts a peer');
    try {
      const res = await fetch(`${peer.url}/api/chats/${chatId}/images/${refs[0]}`, { headers: { authorization: `Bearer ${s.keyA}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/jpeg');
      expect(await bytesOf(res)).toEqual(JPEG);
      const other = await fetch(`${peer.url}/api/chats/${chatId}/images/${refs[0]}`, { headers: { authorization: `Bearer ${s.keyB}` } });
      expect(other.status).toBe(404);
    } finally {
      await peer.stop();
    }
  });
});
