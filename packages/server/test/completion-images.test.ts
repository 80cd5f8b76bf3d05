import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';

// Images in user messages (image_url parts) through both completion routes, with the official
// openai client against the built server and the loopback OpenAI fake as the model: data: URLs,
// URLs fetched through the outbound policy, the type and size limits, a model that cannot take
// images (Ollama), and a chat's history keeping references. docs/AGENT.md, "Images".

/** A real 1x1 PNG, and the first bytes of the other types. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(20, 1)]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4, 0), Buffer.from('WEBPVP8 '), Buffer.alloc(20, 2)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(20, 3)]);
const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;
const MAX_IMAGE = 64 * 1024;
const MAX_REQUEST = 160 * 1024;

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;
let images: Server;
let imagesUrl: string;
/** A second image server whose port the policy does not allow. */
let refusedImages: Server;
let refusedUrl: string;

const serve = async (): Promise<{ server: Server; url: string }> => {
  const server = createServer((req, res) => {
    const body = req.url === '/cat.png' ? PNG : req.url === '/big.png' ? Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE)]) : req.url === '/notes.txt' ? Buffer.from('not an image') : undefined;
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/png' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

const picture = (url: string, text = 'What is in this picture?') =>
  [
    { type: 'text', text },
    { type: 'image_url', image_url: { url, detail: 'low' } },
  ] as OpenAI.Chat.Completions.ChatCompletionContentPart[];
const ask = (content: OpenAI.Chat.Completions.ChatCompletionContentPart[] | string, extra: Record<string, unknown> = {}) =>
  ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra }) as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
/** The image parts the model was sent, as data URLs. */
const sentImages = (i = -1) =>
  ((fake.requests.at(i)?.body.messages ?? []) as { role: string; content: unknown }[])
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((p: { type: string }) => p.type === 'image_url')
    .map((p: { image_url: { url: string } }) => p.image_url.url);
const refused = async (body: unknown, status: number, message: string) => {
  const res = await s.call('POST', '/api/v1/chat/completions', { body });
  expect(res.status).toBe(status);
  expect(res.body.message).toContain(message);
  expect(fake.requests).toEqual([]);
};

beforeAll(async () => {
  fake = await startFakeChatServer();
  ({ server: images, url: imagesUrl } = await serve());
  ({ server: refusedImages, url: refusedUrl } = await serve());
  s = await startTestServer({
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', OLLAMA_HOST: fake.origin },
    outbound: { allowedHosts: [new URL(imagesUrl).host] },
    images: { maxImageBytes: MAX_IMAGE, maxRequestBytes: MAX_REQUEST },
  });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Vision', model: 'gpt-4o', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await fake.close();
  images.close();
  refusedImages.close();
});
beforeEach(() => fake.reset());

describe('images reach the model', () => {
  it('a data: URL, decoded and given to the model as an image', async () => {
    fake.script({ text: 'A single pixel.' });
    const answer = await client.chat.completions.create(ask(picture(dataUrl(PNG))));
    expect(answer.choices[0]?.message.content).toBe('A single pixel.');
    expect(sentImages()).toEqual([dataUrl(PNG)]);
  });

  it('an http(s) URL fetched through the outbound policy; the type is told by the bytes', async () => {
    const content = [...picture(`${imagesUrl}/cat.png`), { type: 'image_url', image_url: { url: dataUrl(GIF, 'image/png') } }] as OpenAI.Chat.Completions.ChatCompletionContentPart[];
    fake.script({ text: 'Two images.' });
    await client.chat.completions.create(ask(content));
    expect(sentImages()).toEqual([dataUrl(PNG), dataUrl(GIF, 'image/gif')]);
    for (const [bytes, type] of [
      [JPEG, 'image/jpeg'],
      [WEBP, 'image/webp'],
    ] as const) {
      fake.script({ text: 'ok' });
      await client.chat.completions.create(ask(picture(dataUrl(bytes, 'application/octet-stream'))));
      expect(sentImages()).toEqual([dataUrl(bytes, type)]);
    }
  });
});

describe('refused with a 400 or 413 naming why, before any model call', () => {
  it('an address the outbound policy refuses', async () => {
    await refused(ask(picture(`${refusedUrl}/cat.png`)), 400, `Refused to connect to 127.0.0.1: `);
    await refused(ask(picture('http://169.254.169.254/latest/meta-data')), 400, 'Refused to connect to 169.254.169.254');
  });

  it('what is not an image of a supported type, or cannot be read', async () => {
    await refused(ask(picture(`${imagesUrl}/notes.txt`)), 400, 'messages.0.content.1.image_url.url: not an image of a supported type (image/png, image/jpeg, image/gif, image/webp)');
    await refused(ask(picture(dataUrl(Buffer.from('<svg/>'), 'image/svg+xml'))), 400, 'not an image of a supported type');
    await refused(ask(picture(`${imagesUrl}/missing.png`)), 400, 'could not be fetched: it answered HTTP 404');
    await refused(ask(picture('ftp://example.com/cat.png')), 400, 'ftp: URLs are not taken');
  });

  it('an image over the limit of one image, and images over the limit of a request', async () => {
    await refused(ask(picture(`${imagesUrl}/big.png`)), 413, `the image is larger than ${MAX_IMAGE} bytes, the limit of one image (--max-image-bytes)`);
    await refused(ask(picture(dataUrl(Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE)])))), 413, '--max-image-bytes');
    const three = [0, 1, 2, 3].map((i) => ({ type: 'image_url', image_url: { url: dataUrl(Buffer.concat([PNG, Buffer.alloc(50 * 1024, i)])) } }));
    await refused(ask(three as never), 413, `the request's images are larger than ${MAX_REQUEST} bytes together, the limit of one request (--max-request-image-bytes)`);
  });

  it('images for a model that cannot take them (Ollama), and outside user messages', async () => {
    await refused(ask(picture(dataUrl(PNG)), { provider: 'ollama', model: 'llama3.2' }), 400, 'messages.0.content.1.image_url.url: provider ollama (model llama3.2) cannot take images');
    await refused(
      {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: picture(dataUrl(PNG)) },
          { role: 'user', content: 'hi' },
        ],
      },
      400,
      '"image_url" content parts are not supported in this message: images are taken in user messages only',
    );
  });
});

describe('a chat keeps references to its images, not their bytes', () => {
  it('stores each image once per chat, sends it again with the history, shows its reference, and deletes it with the chat', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    fake.script({ text: 'A pixel.' }, { text: 'The same pixel.' });
    await client.chat.completions.create({ ...ask(picture(dataUrl(PNG)), { model: projectId }), chatId: chat.id } as never);
    await client.chat.completions.create({ ...ask(picture(`${imagesUrl}/cat.png`, 'And this one?'), { model: projectId }), chatId: chat.id } as never);
    // The second call sent the first turn's image again (from the store) and its own.
    expect(sentImages()).toEqual([dataUrl(PNG), dataUrl(PNG)]);
    const { messages } = (await s.call('GET', `/api/chats/${chat.id}/messages`)).body;
    const ref = messages[0].parts[1].ref;
    expect(ref).toMatch(/^[0-9a-f]{64}$/);
    expect(messages[0]).toMatchObject({
      role: 'user',
      content: 'What is in this picture?',
      parts: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', ref, mediaType: 'image/png', bytes: PNG.byteLength },
      ],
    });
    expect(messages[2]).toMatchObject({ role: 'user', content: 'And this one?', parts: [{ type: 'text' }, { type: 'image', ref }] });
    expect(JSON.stringify(messages)).not.toContain(PNG.toString('base64'));
    expect(await s.stored.holds(PNG.toString('base64'))).toBe(false);
    // One blob for the two messages; the chat's delete takes it.
    const blobs = async () => (await s.stored.blobs.keys()).filter((k) => k.startsWith('chatimg-'));
    expect(await blobs()).toHaveLength(1);
    expect((await s.call('DELETE', `/api/chats/${chat.id}`)).status).toBe(200);
    expect(await blobs()).toEqual([]);
  });

  it("a project's delete takes its chats' images", async () => {
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'Doomed', model: 'gpt-4o', provider: 'openai' } })).body.project.id;
    const blobs = async () => (await s.stored.blobs.keys()).filter((k) => k.startsWith('chatimg-'));
    for (const bytes of [PNG, GIF]) {
      fake.script({ text: 'ok' });
      const res = await s.call('POST', '/api/v1/ai/chat/completions', { body: { ...ask(picture(dataUrl(bytes)), { model: project }), chatId: `chat-${bytes === PNG ? 'png' : 'gif'}-x` } });
      expect(res.status).toBe(200);
    }
    expect(await blobs()).toHaveLength(2);
    expect((await s.call('DELETE', `/api/v1/projects/${project}`)).status).toBe(200);
    expect(await blobs()).toEqual([]);
  });
});
