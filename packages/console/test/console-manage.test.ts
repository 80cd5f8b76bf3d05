import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, DESKTOP, expectAccessible, expectCleanConsole, launchBrowser, openPage, PHONE, screenshot, signIn, startConsoleServer } from './browser.js';
import { expectFits } from './layout.js';

// Managing what a project holds, at a laptop's width and a phone's: chats renamed and deleted,
// a document's chunks read page by page, an empty paste refused with a reason, and the
// service's validation errors said as sentences naming the field.

let browser: Browser;
let server: ConsoleServer;
let projectId: string;
let documentId: string;
const SECTIONS = Array.from({ length: 23 }, (_, i) => `Topic ${i + 1}`);

beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer()]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Handbook', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  // 23 sections, one chunk each: two pages of chunks (20 a page).
  const content = SECTIONS.map((name, i) => `# ${name}\n\nParagraph ${i + 1}: what customers ask about ${name.toLowerCase()}.`).join('\n\n');
  const added = await server.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'handbook.md', fileType: 'md', sourceType: 'upload', content } });
  documentId = added.body.documentId;
  expect(await server.indexed(documentId)).toMatchObject({ status: 'completed', chunkCount: SECTIONS.length });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const chats = async () => (await server.call('GET', `/api/chats?projectId=${projectId}&limit=100`)).body.chats as { id: string; name: string }[];

async function open(page: Page, tab: string): Promise<void> {
  await signIn(page, server);
  await page.goto(`${server.url}/console/#/projects/${projectId}/${tab}`);
}

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('console at %s px', (width, viewport) => {
  it('renames a chat (a blank name is refused with "Name is required") and deletes one after a confirmation that names it', async () => {
    const name = `Refunds ${width}`;
    const other = `Shipping ${width}`;
    await server.call('POST', '/api/chats', { body: { projectId, name: other } });
    const chat = (await server.call('POST', '/api/chats', { body: { projectId, name } })).body.chat;
    const { context, page, problems } = await openPage(browser, viewport);
    try {
      await open(page, 'chat');
      const list = page.getByRole('navigation', { name: 'Chats' });
      await list.getByRole('button', { name }).click();
      await page.getByRole('heading', { name, level: 2 }).waitFor();

      // A rename left open belongs to its chat: opening another chat drops it.
      await page.getByRole('button', { name: `Rename chat ${name}` }).click();
      const field = page.getByLabel('Chat name');
      await field.waitFor();
      await list.getByRole('button', { name: other }).click();
      await page.getByRole('heading', { name: other, level: 2 }).waitFor();
      expect(await field.count()).toBe(0);
      await list.getByRole('button', { name }).click();
      await page.getByRole('heading', { name, level: 2 }).waitFor();

      // Rename: a blank name is the service's 400, worded for people at the field.
      await page.getByRole('button', { name: `Rename chat ${name}` }).click();
      expect(await field.inputValue()).toBe(name);
      await field.fill('   ');
      await page.getByRole('button', { name: 'Save name' }).click();
      await expect.poll(() => page.locator('#chat-name-error').textContent()).toBe('Name is required');
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      await expectAccessible(page, 'rename chat with an error');
      await expectFits(page, 'rename chat');
      await screenshot(page, `chat-rename-${width}`);
      await field.fill(`Refund questions ${width}`);
      await page.getByRole('button', { name: 'Save name' }).click();
      await page.getByRole('heading', { name: `Refund questions ${width}`, level: 2 }).waitFor();
      await list.getByRole('button', { name: `Refund questions ${width}` }).waitFor();
      expect((await chats()).find((c) => c.id === chat.id)?.name).toBe(`Refund questions ${width}`);

      // Delete: Cancel keeps it; confirming removes it from the list and the service.
      await page.getByRole('button', { name: `Delete chat Refund questions ${width}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete chat?' });
      await dialog.getByText(`Refund questions ${width}`).waitFor();
      await expectAccessible(page, 'delete chat');
      await expectFits(page, 'delete chat dialog');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await chats()).some((c) => c.id === chat.id)).toBe(true);
      await page.getByRole('button', { name: `Delete chat Refund questions ${width}` }).click();
      await dialog.getByRole('button', { name: 'Delete chat' }).click();
      await list.getByRole('button', { name: `Refund questions ${width}` }).waitFor({ state: 'detached' });
      await page.getByRole('heading', { name: 'New chat', level: 2 }).waitFor();
      expect((await chats()).some((c) => c.id === chat.id)).toBe(false);
      expect((await server.call('GET', `/api/chats/${chat.id}/messages`)).status).toBe(404);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("shows a document's chunks, page by page, with their position, tokens and section", async () => {
    const { context, page, problems } = await openPage(browser, viewport);
    try {
      await open(page, 'knowledge');
      await page.getByRole('button', { name: 'Chunks of handbook.md' }).click();
      const viewer = page.getByRole('region', { name: 'Chunks of handbook.md' });
      const items = viewer.locator('.chunk-item');
      await expect.poll(() => items.count()).toBe(20);
      // The heading takes the focus, so the keyboard lands on what opened.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('chunks-title');
      const first = items.first();
      expect(await first.locator('.chunk-meta').textContent()).toMatch(/^Chunk 1 of 23 · \d+ tokens · section Topic 1$/);
      expect(await first.locator('.chunk').textContent()).toContain('Paragraph 1: what customers ask about topic 1.');
      // Each chunk as the API has it: the same text and token count.
      const api = (await server.call('GET', `/api/knowledge/documents/${documentId}/chunks?limit=1`)).body.chunks[0];
      expect(await first.locator('.chunk').textContent()).toBe(api.content);
      expect(await first.locator('.chunk-meta').textContent()).toContain(`${api.tokenCount} tokens`);
      await expectAccessible(page, 'chunks');
      await expectFits(page, 'chunks');
      await screenshot(page, `chunks-${width}`);
      // The next page: chunks 21 to 23.
      await viewer.getByRole('navigation', { name: 'Chunks pages' }).getByRole('button', { name: 'Next' }).click();
      await viewer.getByText('21–23 of 23').waitFor();
      expect(await items.locator('.chunk-meta strong').allTextContents()).toEqual(['Chunk 21 of 23', 'Chunk 22 of 23', 'Chunk 23 of 23']);
      await viewer.getByRole('button', { name: 'Close' }).click();
      expect(await viewer.count()).toBe(0);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('says why an empty paste is not indexed, and indexes nothing', async () => {
    const { context, page, problems } = await openPage(browser, viewport);
    try {
      await open(page, 'knowledge');
      const before = (await server.call('GET', `/api/knowledge/documents?projectId=${projectId}`)).body.total;
      await page.getByText('Paste text').click();
      await page.getByRole('button', { name: 'Index text' }).click();
      const error = page.locator('#paste-text-error');
      await expect.poll(() => error.textContent()).toBe('The text is empty: paste or type the text to index.');
      expect(await page.getByLabel('Text', { exact: true }).getAttribute('aria-invalid')).toBe('true');
      await page.getByLabel('Text', { exact: true }).fill('  \n  ');
      await page.getByRole('button', { name: 'Index text' }).click();
      await expect.poll(() => error.textContent()).toBe('The text is only spaces: paste or type the text to index.');
      await expectAccessible(page, 'empty paste');
      await expectFits(page, 'empty paste');
      await screenshot(page, `empty-paste-${width}`);
      // Typing clears the message.
      await page.getByLabel('Text', { exact: true }).fill('Opening hours');
      expect(await error.count()).toBe(0);
      expect(await page.locator('.indexing li').count()).toBe(0);
      expect((await server.call('GET', `/api/knowledge/documents?projectId=${projectId}`)).body.total).toBe(before);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 60_000);
});
