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
      // With its sources, as the live answer had them.
      await expect
        .poll(() => page.locator('.turn').allTextContents(), { timeout: 10_000 })
        .toEqual(['You:How long do I have to ask for a refund?', 'Agent:You can ask for a refund within 30 days of purchase [1].[1] refunds.md']);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('a reopened chat shows its citations as links with the source list; a source whose chunk is gone shows the words kept', async () => {
    const added = await server.call('POST', '/api/knowledge/documents', {
      body: { projectId, fileName: 'warranty.md', fileType: 'md', sourceType: 'upload', content: '# Warranty\n\nEvery kettle has a warranty of two years from the day it is delivered.' },
    });
    expect(await server.indexed(added.body.documentId)).toMatchObject({ status: 'completed' });
    const question = { role: 'user', content: 'What warranty does a kettle have?' };
    // The number the warranty gets among the sources (the same search gives the same numbers).
    const probe = await server.call('POST', '/api/v1/chat/completions', { body: { model: projectId, messages: [question] } });
    const n = (probe.body.sources as { index: number; fileName: string }[]).find((s) => s.fileName === 'warranty.md')?.index;
    expect(n).toBeGreaterThan(0);
    const chat = (await server.call('POST', '/api/chats', { body: { projectId, name: 'Kettle warranty' } })).body.chat;
    server.upstream.script({ text: `Two years [${n}].` });
    const asked = await server.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId: chat.id, messages: [question] } });
    const sources = asked.body.sources as { index: number; fileName: string; excerpt: string }[];
    const warranty = sources.find((s) => s.index === n);
    expect(warranty).toMatchObject({ fileName: 'warranty.md', excerpt: '# Warranty Every kettle has a warranty of two years from the day it is delivered.' });

    const { context, page, problems } = await openPage(browser);
    try {
      // Opened from the list after the page loaded: the answer comes from the stored messages only.
      await openChat(page);
      const reopen = async () => {
        await page.getByRole('navigation', { name: 'Chats' }).getByRole('button', { name: 'Kettle warranty' }).click();
        await expect.poll(() => answer(page).locator('.text').textContent(), { timeout: 10_000 }).toBe(`Two years [${n}].`);
      };
      await reopen();
      // [n] is a link to its source, and the source list is there, as on a live answer.
      const cite = answer(page)
        .locator('.text')
        .getByRole('button', { name: `Source ${n}: warranty.md` });
      expect(await cite.textContent()).toBe(`[${n}]`);
      expect(await answer(page).getByRole('list', { name: 'Sources' }).getByRole('button').allTextContents()).toEqual(sources.map((s) => `[${s.index}] ${s.fileName}`));
      await cite.click();
      const panel = page.getByRole('complementary');
      await expect.poll(() => panel.locator('.chunk').textContent(), { timeout: 10_000 }).toContain('Every kettle has a warranty of two years');
      expect(await panel.locator('mark').allTextContents()).toContain('warranty');
      await expectAccessible(page, 'chat (reopened)');

      // The document is deleted: its chunk is gone; the answer still shows the words it kept.
      expect((await server.call('DELETE', `/api/knowledge/documents/${added.body.documentId}`)).status).toBe(200);
      await page.reload();
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      await reopen();
      await answer(page)
        .locator('.text')
        .getByRole('button', { name: `Source ${n}: warranty.md` })
        .click();
      await expect.poll(() => panel.textContent(), { timeout: 10_000 }).toContain('no longer in the knowledge base');
      expect(await panel.locator('.excerpt').textContent()).toBe(warranty?.excerpt);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('stops an answer: the request is aborted and nothing more arrives', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      server.upstream.script({ text: words(80), chunkDelayMs: 150 });
      await ask(page, 'Tell me a long story about refunds');
      await expect.poll(async () => ((await answer(page).locator('.text').textContent()) ?? '').length, { timeout: 20_000 }).toBeGreaterThan(0);
      // The browser reports the aborted request on its own schedule, possibly after the page
      // already shows "Stopped": wait for the event itself (listened for before the click).
      const aborted = page.waitForEvent('requestfailed', { predicate: (request) => request.url().includes('/api/v1/ai/chat/completions'), timeout: 10_000 });
      await page.getByRole('button', { name: 'Stop' }).click();
      expect((await aborted).failure()?.errorText).toMatch(/ABORTED/i);
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 10_000 }).toBe('stopped');
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
