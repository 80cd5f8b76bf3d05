import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

const fixture = (name: string) => readFile(new URL(`../../core/test/fixtures/${name}`, import.meta.url));

let browser: Browser;
let server: ConsoleServer;
let projectId: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer()]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Handbook', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const REFUNDS = '# Refunds\n\nCustomers can ask for a refund within 30 days of purchase. The refund policy covers every plan.\n\n# Shipping\n\nExpress shipping takes two days.\n';

/** Records every text the indexing list shows, as it changes (to see progress happen, not just end). */
async function recordStages(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { stages: string[] }).stages = seen;
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('.indexing li')) seen.push(`${el.querySelector('.name')?.textContent}: ${el.querySelector('.stage')?.textContent}`);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  return () => page.evaluate(() => (window as unknown as { stages: string[] }).stages);
}

const item = (page: Page, name: string) => page.locator('.indexing li', { has: page.locator('.name', { hasText: name }) });

describe('console: knowledge', () => {
  it('uploads several files with live progress to completion, and shows a failed one with its error', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.getByRole('link', { name: 'Handbook' }).click();
      await page.getByRole('heading', { name: 'Add documents' }).waitFor();
      await page.getByText('No documents yet').waitFor();
      await expectAccessible(page, 'knowledge (empty)');
      const stages = await recordStages(page);
      await page.locator('#file-input').setInputFiles([
        { name: 'refunds.md', mimeType: 'text/markdown', buffer: Buffer.from(REFUNDS) },
        { name: 'sample.pdf', mimeType: 'application/pdf', buffer: await fixture('sample.pdf') },
        { name: 'broken.pdf', mimeType: 'application/pdf', buffer: Buffer.from('this is not a PDF at all') },
      ]);
      await item(page, 'refunds.md').and(page.locator('[data-status="completed"]')).waitFor({ timeout: 90_000 });
      await item(page, 'sample.pdf').and(page.locator('[data-status="completed"]')).waitFor({ timeout: 90_000 });
      await item(page, 'broken.pdf').and(page.locator('[data-status="failed"]')).waitFor({ timeout: 90_000 });
      expect(await item(page, 'broken.pdf').getByRole('alert').textContent()).toMatch(/Invalid PDF file broken\.pdf/);
      // The markdown went through the SSE indexing stream: its stages were shown as they came.
      const shown = (await stages()).filter((s) => s.startsWith('refunds.md: '));
      expect(shown).toEqual(expect.arrayContaining(['refunds.md: Creating embeddings (60%)', 'refunds.md: Indexed']));
      expect(shown.indexOf('refunds.md: Creating embeddings (60%)')).toBeLessThan(shown.indexOf('refunds.md: Indexed'));
      // The PDF was uploaded (upload?wait=false), then followed through its indexing events: the
      // service's stages after the upload (a child process parses it, so it cannot be done
      // before the console listens).
      const pdf = (await stages()).filter((s) => s.startsWith('sample.pdf: '));
      expect(
        pdf.some((s) => /^sample\.pdf: (Extracting text \(30%\)|Creating embeddings \(60%\)|Storing vectors \(90%\))$/.test(s)),
        pdf.join(' | '),
      ).toBe(true);
      expect(pdf.at(-1)).toBe('sample.pdf: Indexed');

      // Pasted text goes through the same stream.
      await page.getByText('Paste text').click();
      await page.getByLabel('File name').fill('faq.md');
      await page.getByLabel('Text', { exact: true }).fill('# FAQ\n\nOpening hours are nine to five on weekdays.');
      await page.getByRole('button', { name: 'Index text' }).click();
      await item(page, 'faq.md').and(page.locator('[data-status="completed"]')).waitFor({ timeout: 60_000 });

      // The table: every document with its chunk and vector counts; the status filter; a failed one's error.
      const rows = page.locator('table.list tbody tr');
      await expect.poll(() => rows.count()).toBe(4);
      const completed = page.locator('table.list tbody tr[data-status="completed"] td.number');
      for (const cell of await completed.all()) expect(Number(await cell.textContent())).toBeGreaterThan(0);
      await expectAccessible(page, 'knowledge');
      await screenshot(page, 'knowledge');
      await page.getByLabel('Status').selectOption('failed');
      await expect.poll(() => rows.count()).toBe(1);
      await rows.first().getByRole('button', { name: 'Show error' }).click();
      await expect.poll(() => rows.first().locator('.error').textContent()).toMatch(/Invalid PDF file broken\.pdf/);
      await page.getByLabel('Status').selectOption('pending');
      await page.getByText('No pending documents').waitFor();
      await page.getByLabel('Status').selectOption('');

      // Delete, after confirming.
      await page.getByRole('button', { name: 'Delete broken.pdf' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete document' }).click();
      await expect.poll(() => rows.count()).toBe(3);
      const listed = await server.call('GET', `/api/knowledge/documents?projectId=${projectId}`);
      expect(listed.body.documents.map((d: { fileName: string }) => d.fileName).sort()).toEqual(['faq.md', 'refunds.md', 'sample.pdf']);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 240_000);

  it('searches with hits, scores, files, sections and the query terms marked', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      // A project of its own, its document added through the API (the test runs alone too).
      const searchProject = (await server.call('POST', '/api/projects/create', { body: { name: 'Search', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
      const added = await server.call('POST', '/api/knowledge/documents', { body: { projectId: searchProject, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: REFUNDS } });
      expect(await server.indexed(added.body.documentId)).toMatchObject({ status: 'completed' });
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${searchProject}/knowledge`);
      const playground = page.getByRole('region', { name: 'Search playground' });
      await playground.getByLabel('Query').fill('refund policy');
      await playground.getByLabel('Search type').selectOption('hybrid');
      await playground.getByLabel('Top K').fill('3');
      await playground.getByRole('button', { name: 'Search', exact: true }).click();
      const hits = page.getByRole('list', { name: 'Search results' }).locator('li.hit');
      await hits.first().waitFor();
      expect(await hits.count()).toBeLessThanOrEqual(3);
      const first = hits.first();
      expect(await first.locator('.hit-head strong').textContent()).toBe('refunds.md');
      expect(await first.locator('.hit-head').textContent()).toContain('§ Refunds');
      expect(await first.locator('.score').textContent()).toMatch(/^score [01]\.\d{3}$/);
      const marked = (await first.locator('mark').allTextContents()).map((m) => m.toLowerCase());
      expect(marked).toEqual(expect.arrayContaining(['refund', 'policy']));
      expect(marked.every((m) => m === 'refund' || m === 'policy')).toBe(true);
      await expectAccessible(page, 'search');
      await screenshot(page, 'search');
      // A value the service refuses: a sentence naming the field, next to it.
      await playground.getByLabel('Minimum score').fill('3');
      await playground.getByRole('button', { name: 'Search', exact: true }).click();
      await expect.poll(() => page.locator('#search-minScore-error').textContent()).toBe('Minimum score must be 1 or less');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows the service message of a bad RAG setting next to its field, and saves a good one', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${projectId}/knowledge`);
      await page.getByRole('heading', { name: 'RAG settings' }).waitFor();
      await page.getByLabel('Vector store', { exact: true }).selectOption('qdrant');
      await page.getByLabel('Vector store configuration (JSON)').fill('{"indexName": "docs"}');
      await page.getByRole('button', { name: 'Save settings' }).click();
      const error = page.locator('#settings-vectorStoreConfig-error');
      await expect.poll(() => error.textContent()).toMatch(/^Vector store configuration: .*endpoint/);
      await expectAccessible(page, 'settings with an error');
      await page.locator('#settings-title').scrollIntoViewIfNeeded();
      await screenshot(page, 'settings-error');
      await page.getByLabel('Vector store configuration (JSON)').fill('{not json');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await expect.poll(() => error.textContent()).toMatch(/^Not valid JSON/);
      await page.getByLabel('Vector store', { exact: true }).selectOption('');
      await page.getByLabel('Vector store configuration (JSON)').fill('');
      await page.getByRole('region', { name: 'RAG settings' }).getByLabel('Top K').fill('4');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'Knowledge settings updated' }).waitFor();
      const stored = (await server.call('GET', `/api/knowledge/settings?projectId=${projectId}`)).body;
      expect(stored.settings).toMatchObject({ topK: 4, vectorstoreProvider: 'builtin', vectorStoreConfig: null });
      expect(stored.defaults).toEqual(['vectorstoreProvider', 'vectorStoreConfig', 'embeddingModel', 'chunkSize', 'chunkOverlap', 'searchType', 'minScore', 'alpha']);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('sends only what changed (an emptied field goes back to its default), and offers re-indexing after a chunking change, following it to the end', async () => {
    const id = (await server.call('POST', '/api/projects/create', { body: { name: 'Re-chunked', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
    await server.call('PUT', '/api/knowledge/settings', { body: { projectId: id, settings: { topK: 7, minScore: 0.4 } } });
    const content = Array.from({ length: 40 }, (_, i) => `Sentence ${i} explains how refunds of order ${i} are paid.`).join(' ');
    const added = await server.call('POST', '/api/knowledge/documents', { body: { projectId: id, fileName: 'refunds.txt', fileType: 'txt', sourceType: 'upload', content } });
    const before = await server.indexed(added.body.documentId);
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${id}/knowledge`);
      const settings = page.getByRole('region', { name: 'RAG settings' });
      await settings.getByLabel('Top K').waitFor();
      // Stored values fill the fields; defaults are the placeholders.
      expect(await settings.getByLabel('Top K').inputValue()).toBe('7');
      expect(await settings.getByLabel('Chunk size (tokens)').inputValue()).toBe('');
      expect(await settings.getByLabel('Chunk size (tokens)').getAttribute('placeholder')).toBe('default (512)');
      expect(await page.getByRole('button', { name: 'Re-index documents' }).count()).toBe(0);

      const sent: unknown[] = [];
      page.on('request', (r) => {
        if (r.method() === 'PUT' && r.url().endsWith('/api/knowledge/settings')) sent.push(r.postDataJSON());
      });
      await settings.getByLabel('Minimum score').fill('');
      await settings.getByLabel('Chunk size (tokens)').fill('16');
      await settings.getByLabel('Chunk overlap (tokens)').fill('0');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'documents indexed before keep their chunks' }).waitFor();
      expect(sent).toEqual([{ projectId: id, settings: { chunkSize: 16, chunkOverlap: 0, minScore: null } }]);
      const read = (await server.call('GET', `/api/knowledge/settings?projectId=${id}`)).body;
      expect(read.settings).toMatchObject({ topK: 7, chunkSize: 16, chunkOverlap: 0, minScore: null });
      expect(read.defaults).toContain('minScore');
      expect((await server.call('GET', `/api/knowledge/documents/${before.id}`)).body.document.chunkCount).toBe(before.chunkCount);

      const offer = page.getByRole('button', { name: 'Re-index documents' });
      await expectAccessible(page, 're-index offered');
      await offer.click();
      await page.getByRole('status').filter({ hasText: 'Re-indexed 1 document.' }).waitFor({ timeout: 90_000 });
      const after = (await server.call('GET', `/api/knowledge/documents/${before.id}`)).body.document;
      expect(after).toMatchObject({ status: 'completed' });
      expect(after.chunkCount).toBeGreaterThan(before.chunkCount);
      // The documents table shows the new count.
      await page
        .getByRole('cell', { name: String(after.chunkCount), exact: true })
        .first()
        .waitFor();
      await page.locator('#settings-title').scrollIntoViewIfNeeded();
      await screenshot(page, 'settings-reindexed');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
