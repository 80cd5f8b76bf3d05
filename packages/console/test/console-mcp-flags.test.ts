import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, signIn, startConsoleServer } from './browser.js';

// An MCP server's approval setting (none, all tools, named tools) and sampling, set when it is
// added and kept by the service; the approval setting changed later (PATCH), against a real
// server-everything over streamable HTTP.
let browser: Browser;
let server: ConsoleServer;
let everything: ServerProcess;
let projectId: string;
beforeAll(async () => {
  [browser, server, everything] = await Promise.all([launchBrowser(), startConsoleServer(), startEverything('streamableHttp')]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Guarded MCP', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await everything?.stop();
});

type Saved = { id: string; name: string; requiresApproval: boolean | string[]; allowSampling: boolean };
const saved = async (): Promise<Saved[]> =>
  ((await server.call('GET', `/api/mcp/servers?projectId=${projectId}`)).body.servers as Saved[]).map(({ id, name, requiresApproval, allowSampling }) => ({
    id,
    name,
    requiresApproval,
    allowSampling,
  }));
const item = (page: Page) => page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'everything' }) });
const flagsLine = (page: Page) => item(page).locator('.server-flags');

async function openMcp(page: Page): Promise<void> {
  await page.goto(`${server.url}/console/#/projects/${projectId}/mcp`);
  await page.reload();
  await page.getByRole('heading', { name: 'MCP servers', level: 2 }).waitFor();
}

describe('console: MCP server approvals and sampling', () => {
  it('adds a server with named tools needing approval and sampling allowed, keeps both after a reload, then changes the approvals', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await openMcp(page);
      await page.getByRole('button', { name: 'Add server' }).first().click();
      await page.getByLabel('Name', { exact: true }).fill('everything');
      await page.getByLabel('URL', { exact: true }).fill(`http://127.0.0.1:${everything.port}/mcp`);
      await page.getByLabel('Transport').selectOption('http');
      await page.getByLabel('named tools').check();
      // Named tools with no name: refused in the form, at the names, before anything is sent.
      await page.getByLabel('Tools that need approval').fill(' , ');
      await page.locator('form').getByRole('button', { name: 'Add server' }).click();
      await expect.poll(() => page.locator('#mcp-approval-names-error').textContent()).toBe('Name at least one tool, or choose none');
      expect(await page.getByLabel('Tools that need approval').getAttribute('aria-invalid')).toBe('true');
      expect(await saved()).toEqual([]);
      await page.getByLabel('Tools that need approval').fill('echo, get-sum');
      expect(await page.locator('#mcp-allowSampling-hint').textContent()).toContain('cannot be changed');
      await page.getByLabel('Allow sampling').check();
      await expectAccessible(page, 'add MCP server with approvals');
      await page.locator('form').getByRole('button', { name: 'Add server' }).click();
      await page.getByRole('status').filter({ hasText: 'Added everything' }).waitFor({ timeout: 20_000 });
      expect(await saved()).toEqual([expect.objectContaining({ name: 'everything', requiresApproval: ['echo', 'get-sum'], allowSampling: true })]);

      await openMcp(page);
      expect(await flagsLine(page).textContent()).toBe('approval for echo, get-sum · sampling allowed');
      await item(page).getByRole('button', { name: 'Approvals of everything' }).click();
      const editor = item(page).getByRole('form', { name: 'Approval setting' });
      expect(await editor.getByLabel('named tools').isChecked()).toBe(true);
      expect(await editor.getByLabel('Tools that need approval').inputValue()).toBe('echo get-sum');
      await expectAccessible(page, 'MCP approvals editor');
      await editor.getByLabel('all tools').check();
      await editor.getByRole('button', { name: 'Save approvals' }).click();
      await expect.poll(() => flagsLine(page).textContent()).toBe('approval for all tools · sampling allowed');
      expect(await saved()).toEqual([expect.objectContaining({ requiresApproval: true, allowSampling: true })]);

      await openMcp(page);
      expect(await flagsLine(page).textContent()).toBe('approval for all tools · sampling allowed');
      await item(page).getByRole('button', { name: 'Approvals of everything' }).click();
      await item(page).getByLabel('named tools').check();
      await item(page).getByRole('button', { name: 'Save approvals' }).click();
      await expect.poll(() => item(page).getByRole('alert').textContent()).toBe('Name at least one tool, or choose none');
      expect(await saved()).toEqual([expect.objectContaining({ requiresApproval: true })]);
      await item(page).getByLabel('none').check();
      await item(page).getByRole('button', { name: 'Save approvals' }).click();
      await expect.poll(() => flagsLine(page).textContent()).toBe('no approvals · sampling allowed');
      expect(await saved()).toEqual([expect.objectContaining({ requiresApproval: false, allowSampling: true })]);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
