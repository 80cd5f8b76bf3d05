import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

let browser: Browser;
let server: ConsoleServer;
let projectId: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer()]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Support', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const added = await server.call('POST', '/api/knowledge/documents', {
    body: { projectId, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: '# Refunds\n\nCustomers can ask for a refund within 30 days of purchase.' },
  });
  expect(await server.indexed(added.body.documentId)).toMatchObject({ status: 'completed' });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(' ');
const answer = (page: Page) => page.locator('.turn.assistant').last();

/** Opens the project's chat signed in, and asks `question`. */
async function ask(page: Page, question: string): Promise<void> {
  await page.getByLabel('Question').fill(question);
  await page.getByRole('button', { name: 'Send' }).click();
}

async function openChat(page: Page): Promise<void> {
  await signIn(page, server);
  await page.goto(`${server.url}/console/#/projects/${projectId}/chat`);
  await page.getByRole('heading', { name: 'Chats' }).waitFor();
}

describe('console: chat', () => {
  it('streams an answer token by token with numbered citations that open the chunk, and lists the chat', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      await page.getByText('Ask the agent').waitFor();
      await expectAccessible(page, 'chat (empty)');
      server.upstream.script({ text: 'You can ask for a refund within 30 days of purchase [1].', chunkDelayMs: 120 });
      await ask(page, 'How long do I have to ask for a refund?');
      // Streamed: a part of the answer shows while it is still coming.
      await expect
        .poll(async () => (await answer(page).getAttribute('data-state')) === 'streaming' && ((await answer(page).locator('.text').textContent()) ?? '').length > 0, { timeout: 20_000 })
        .toBe(true);
      const partial = (await answer(page).locator('.text').textContent()) ?? '';
      expect(partial.length).toBeLessThan('You can ask for a refund within 30 days of purchase [1].'.length);
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 20_000 }).toBe(null);
      expect(await answer(page).locator('.text').textContent()).toBe('You can ask for a refund within 30 days of purchase [1].');
      // The model was given the chunk; the citation opens it.
      expect(JSON.stringify(server.upstream.requests.at(-1)?.messages)).toContain('within 30 days of purchase');
      await answer(page).getByRole('button', { name: 'Source 1: refunds.md' }).click();
      const panel = page.getByRole('complementary');
      await expect.poll(() => panel.locator('.chunk').textContent(), { timeout: 10_000 }).toContain('Customers can ask for a refund within 30 days of purchase.');
      expect(await panel.locator('mark').allTextContents()).toContain('refund');
      await expectAccessible(page, 'chat');
      await screenshot(page, 'chat');
      await panel.getByRole('button', { name: 'Close' }).click();
      // The chat is listed; its history comes back when it is opened again.
      const chats = page.getByRole('navigation', { name: 'Chats' });
      await chats.getByRole('button', { name: 'How long do I have to ask for a refund?' }).waitFor();
      await chats.getByRole('button', { name: 'New chat' }).click();
      await page.getByText('Ask the agent').waitFor();
      await chats.getByRole('button', { name: 'How long do I have to ask for a refund?' }).click();
      await expect.poll(() => page.locator('.turn').allTextContents(), { timeout: 10_000 }).toEqual(['You:How long do I have to ask for a refund?', 'Agent:You can ask for a refund within 30 days of purchase [1].']);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('stops an answer: the request is aborted and nothing more arrives', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      const aborted: string[] = [];
      page.on('requestfailed', (request) => aborted.push(`${request.url()} ${request.failure()?.errorText}`));
      server.upstream.script({ text: words(80), chunkDelayMs: 150 });
      await ask(page, 'Tell me a long story about refunds');
      await expect.poll(async () => ((await answer(page).locator('.text').textContent()) ?? '').length, { timeout: 20_000 }).toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 10_000 }).toBe('stopped');
      expect(aborted.some((line) => line.includes('/api/v1/ai/chat/completions') && /ABORTED/i.test(line))).toBe(true);
      const stopped = await answer(page).locator('.text').textContent();
      await new Promise((r) => setTimeout(r, 1000));
      expect(await answer(page).locator('.text').textContent()).toBe(stopped);
      expect(stopped).not.toContain('word80');
      await page.getByRole('button', { name: 'Send' }).waitFor();
      // A stopped answer is not resumed by a reload.
      expect(await page.evaluate(() => sessionStorage.getItem('agent-platform.pending-answer'))).toBe(null);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('resumes an answer after a reload in the middle of it, through the resumable stream', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      const full = words(30);
      server.upstream.script({ text: full, chunkDelayMs: 150 });
      const before = server.upstream.requests.length;
      await ask(page, 'Count for me please');
      await expect.poll(async () => ((await answer(page).locator('.text').textContent()) ?? '').split(' ').length, { timeout: 20_000 }).toBeGreaterThan(3);
      await page.reload();
      // Signed in still (session storage), back on the chat, the answer continues to its end.
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      await expect.poll(() => answer(page).locator('.text').textContent(), { timeout: 30_000 }).toBe(full);
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 10_000 }).toBe(null);
      expect(await page.locator('.turn.user').last().textContent()).toBe('You:Count for me please');
      // The question was asked once: the reload replayed the stream, it did not ask again.
      expect(server.upstream.requests.length).toBe(before + 1);
      const chats = (await server.call('GET', '/api/chats')).body.chats as { id: string; name: string }[];
      const chat = chats.find((c) => c.name === 'Count for me please');
      const messages = (await server.call('GET', `/api/chats/${chat?.id}/messages`)).body.messages as { role: string; content: string }[];
      expect(messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([full]);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
