import { createHash } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

// The chat screen's images (picked and pasted, sent as data: URLs, shown, the service's 400/413),
// structured output (response_format) and the model's reasoning shown apart from the answer.

/** The server's limit of one image, small so that a test image can pass it. */
const MAX_IMAGE_BYTES = 50_000;

let browser: Browser;
let server: ConsoleServer;
let projectId: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer({ AGENT_PLATFORM_MAX_IMAGE_BYTES: String(MAX_IMAGE_BYTES) })]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Vision', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const answer = (page: Page) => page.locator('.turn.assistant').last();
const question = (page: Page) => page.locator('.turn.user').last();
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
type Part = { type: string; text?: string; image_url?: { url: string } };

async function openChat(page: Page): Promise<void> {
  await signIn(page, server);
  await page.goto(`${server.url}/console/#/projects/${projectId}/chat`);
  await page.getByRole('heading', { name: 'Chats' }).waitFor();
}

/** A PNG of one colour, drawn by the browser. */
async function png(page: Page, colour: string): Promise<Buffer> {
  const url = await page.evaluate((fill) => {
    const canvas = document.createElement('canvas');
    canvas.width = 48;
    canvas.height = 32;
    const g = canvas.getContext('2d') as CanvasRenderingContext2D;
    g.fillStyle = fill;
    g.fillRect(0, 0, 48, 32);
    return canvas.toDataURL('image/png');
  }, colour);
  return Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
}

/** Chooses files with the "Attach images" button's file chooser. */
async function pick(page: Page, files: { name: string; mimeType: string; buffer: Buffer }[]): Promise<void> {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Attach images' }).click();
  await (await chooser).setFiles(files);
}

/** Pastes an image file into the question box, as the clipboard gives a copied image. */
async function paste(page: Page, name: string, bytes: Buffer): Promise<void> {
  await page.getByLabel('Question').focus();
  await page.evaluate(
    ({ name, base64 }) => {
      const data = new DataTransfer();
      data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type: 'image/png' }));
      document.getElementById('question')?.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    },
    { name, base64: bytes.toString('base64') },
  );
}

/** Whether every image of `scope` has loaded (the CSP let its blob: URL through and it decoded). */
const loadedImages = (page: Page, selector: string) => page.locator(selector).evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth));

describe('console: chat with images, structured output and reasoning', () => {
  it('attaches images with the picker and by paste, sends them as data: URLs, shows them, and the history keeps references', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      const red = await png(page, '#d00');
      const blue = await png(page, '#00d');
      await pick(page, [{ name: 'red.png', mimeType: 'image/png', buffer: red }]);
      await paste(page, 'blue.png', blue);
      const attached = page.locator('form.ask .images img');
      await expect.poll(() => attached.count(), { timeout: 10_000 }).toBe(2);
      expect(await attached.evaluateAll((imgs) => imgs.map((i) => i.getAttribute('alt')))).toEqual([`red.png, PNG, ${red.length} bytes`, `blue.png, PNG, ${blue.length} bytes`]);
      await expect.poll(() => loadedImages(page, 'form.ask .images img')).toEqual([48, 48]);
      // One can be removed before sending, and added again.
      await page.getByRole('button', { name: 'Remove image 2' }).click();
      await expect.poll(() => attached.count()).toBe(1);
      await paste(page, 'blue.png', blue);
      await expect.poll(() => attached.count()).toBe(2);
      await expectAccessible(page, 'chat (images attached)');

      server.upstream.script({ text: 'A red square and a blue one.' });
      await page.getByLabel('Question').fill('What colours are these?');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 20_000 }).toBe(null);
      expect(await answer(page).locator('.text').textContent()).toBe('A red square and a blue one.');
      // Sent as the question's text and one image_url part per image, with their data: URLs.
      const sent = server.upstream.requests.at(-1)?.messages.at(-1) as { role: string; content: Part[] };
      expect(sent.role).toBe('user');
      const urls = sent.content.filter((p) => p.type === 'image_url').map((p) => p.image_url?.url);
      expect(urls).toEqual([`data:image/png;base64,${red.toString('base64')}`, `data:image/png;base64,${blue.toString('base64')}`]);
      expect(JSON.stringify(sent.content)).toContain('What colours are these?');
      // The question shows its images; the box is empty again.
      expect(await loadedImages(page, '.turn.user .images img')).toEqual([48, 48]);
      expect(await attached.count()).toBe(0);
      await screenshot(page, 'chat-images');

      // The chat keeps references to the images, not their bytes.
      const chats = (await server.call('GET', `/api/chats?projectId=${projectId}`)).body.chats as { id: string; name: string }[];
      const chat = chats.find((c) => c.name === 'What colours are these?');
      const stored = (await server.call('GET', `/api/chats/${chat?.id}/messages`)).body.messages as { role: string; parts?: { type: string; ref?: string; bytes?: number }[] }[];
      expect(stored.find((m) => m.role === 'user')?.parts).toEqual([
        { type: 'text', text: 'What colours are these?' },
        { type: 'image', ref: sha256(red), mediaType: 'image/png', bytes: red.length },
        { type: 'image', ref: sha256(blue), mediaType: 'image/png', bytes: blue.length },
      ]);
      // Reopened in this page: shown from the page's own copy, matched by the reference.
      const list = page.getByRole('navigation', { name: 'Chats' });
      await list.getByRole('button', { name: 'New chat' }).click();
      await page.getByText('Ask the agent').waitFor();
      await list.getByRole('button', { name: 'What colours are these?' }).click();
      await expect.poll(() => loadedImages(page, '.turn.user .images img'), { timeout: 10_000 }).toEqual([48, 48]);
      // After a reload the page has no copy: each stored image is fetched from the chat with the
      // key (in the Authorization header, as an <img> cannot send it) and shown from a blob: URL.
      await page.reload();
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      const fetched: { url: string; authorization: string | undefined }[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/images/')) fetched.push({ url: r.url(), authorization: r.headers().authorization });
      });
      await list.getByRole('button', { name: 'What colours are these?' }).click();
      await expect.poll(() => loadedImages(page, '.turn.user .images img'), { timeout: 10_000 }).toEqual([48, 48]);
      expect(
        await question(page)
          .locator('.images img')
          .evaluateAll((imgs) => imgs.map((i) => [i.getAttribute('src')?.slice(0, 5), i.getAttribute('alt')])),
      ).toEqual([
        ['blob:', `PNG, ${red.length} bytes`],
        ['blob:', `PNG, ${blue.length} bytes`],
      ]);
      expect(fetched.map((f) => new URL(f.url).pathname).sort()).toEqual([`/api/chats/${chat?.id}/images/${sha256(red)}`, `/api/chats/${chat?.id}/images/${sha256(blue)}`].sort());
      expect(fetched.every((f) => f.authorization === `Bearer ${server.keyA}`)).toBe(true);
      expect(await question(page).locator('.text').textContent()).toBe('What colours are these?');
      // Shown from the fetched bytes: the page draws them back and gets the colours sent.
      const colours = await question(page)
        .locator('.images img')
        .evaluateAll((imgs) =>
          imgs.map((i) => {
            const canvas = document.createElement('canvas');
            canvas.width = 1;
            canvas.height = 1;
            const g = canvas.getContext('2d') as CanvasRenderingContext2D;
            g.drawImage(i as HTMLImageElement, 0, 0);
            return Array.from(g.getImageData(0, 0, 1, 1).data.slice(0, 3));
          }),
        );
      expect(colours).toEqual([
        [221, 0, 0],
        [0, 0, 221],
      ]);
      await screenshot(page, 'chat-images-reloaded');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("shows the service's message for an image it refuses: not an image (400), over its size limit (413)", async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      const before = server.upstream.requests.length;
      const ask = async (text: string) => {
        await page.getByLabel('Question').fill(text);
        await page.getByRole('button', { name: 'Send' }).click();
        await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 20_000 }).toBe('failed');
        return answer(page).getByRole('alert').textContent();
      };
      await pick(page, [{ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('these are notes, not a picture') }]);
      expect(await ask('Is this a picture?')).toBe('Image 1: not an image of a supported type (image/png, image/jpeg, image/gif, image/webp), judged by its bytes');
      // Past the server's limit: a PNG's signature and more bytes than it takes.
      const big = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(MAX_IMAGE_BYTES + 1000, 7)]);
      await pick(page, [{ name: 'big.png', mimeType: 'image/png', buffer: big }]);
      expect(await ask('And this one?')).toBe(`Image 1: the image is larger than ${MAX_IMAGE_BYTES} bytes, the limit of one image (--max-image-bytes)`);
      // Refused before the model was asked.
      expect(server.upstream.requests.length).toBe(before);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('sets structured output: a schema checked as JSON before sending, sent as response_format; an answer that is not JSON ends with the service’s error', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      await page.getByText('Structured output').click();
      await page.getByLabel('Answer format').selectOption('json_schema');
      await page.getByLabel('Schema name').fill('city');
      const schema = page.getByLabel('Schema', { exact: true });
      await schema.fill('{ "type": "object", "properties": { "name": { "type": "string" } }, ');
      const before = server.upstream.requests.length;
      await page.getByLabel('Question').fill('Which city is the capital of France?');
      await page.getByRole('button', { name: 'Send' }).click();
      // Not JSON: said at the field, which has the focus; nothing is sent and the question stays.
      await expect.poll(() => page.locator('#format-schema-error').textContent()).toMatch(/^Schema is not valid JSON: /);
      expect(await schema.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await schema.getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel('Question').inputValue()).toBe('Which city is the capital of France?');
      expect(server.upstream.requests.length).toBe(before);
      await expectAccessible(page, 'chat (structured output)');

      const city = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
      await schema.fill(JSON.stringify(city));
      server.upstream.script({ text: '{"name":"Paris"}' });
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 20_000 }).toBe(null);
      expect(await page.locator('#format-schema-error').count()).toBe(0);
      expect(server.upstream.requests.at(-1)?.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'city', schema: city } });
      // Shown as code, indented.
      expect(await answer(page).locator('pre.text').textContent()).toBe('{\n  "name": "Paris"\n}');
      await screenshot(page, 'chat-structured');

      // Any JSON object; the model answers prose: the service's error ends the answer.
      await page.getByLabel('Answer format').selectOption('json_object');
      server.upstream.script({ text: 'Paris, of course.' });
      await page.getByLabel('Question').fill('And of Italy?');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 20_000 }).toBe('failed');
      expect(server.upstream.requests.at(-1)?.response_format).toEqual({ type: 'json_object' });
      expect(await answer(page).getByRole('alert').textContent()).toMatch(/JSON/);
      // None again: no response_format.
      await page.getByLabel('Answer format').selectOption('none');
      server.upstream.script({ text: 'Rome.' });
      await page.getByLabel('Question').fill('Just say it');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => answer(page).locator('.text').textContent(), { timeout: 20_000 }).toBe('Rome.');
      expect(server.upstream.requests.at(-1)?.response_format).toBeUndefined();
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows the reasoning the model streamed apart from the answer, collapsed', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      server.upstream.script({ reasoning: 'The user greets me. A greeting back is enough.', text: 'Hello!' });
      await page.getByLabel('Question').fill('Hi');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 20_000 }).toBe(null);
      expect(await answer(page).locator('.text').textContent()).toBe('Hello!');
      const reasoning = answer(page).locator('details.reasoning');
      expect(await reasoning.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      expect(await reasoning.locator('.reasoning-text').isVisible()).toBe(false);
      await reasoning.getByText('Reasoning').click();
      expect(await reasoning.locator('.reasoning-text').textContent()).toBe('The user greets me. A greeting back is enough.');
      await expectAccessible(page, 'chat (reasoning)');
      await screenshot(page, 'chat-reasoning');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
