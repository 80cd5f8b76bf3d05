import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

// The MCP servers tab against a real MCP server: @modelcontextprotocol/server-everything over
// streamable HTTP, bound to 127.0.0.1, as the server's own MCP tests start it.
let browser: Browser;
let server: ConsoleServer;
let everything: ServerProcess;
let projectId: string;
beforeAll(async () => {
  [browser, server, everything] = await Promise.all([launchBrowser(), startConsoleServer(), startEverything('streamableHttp')]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Everything agent', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await everything?.stop();
});

const everythingUrl = () => `http://127.0.0.1:${everything.port}/mcp`;
const servers = async () => (await server.call('GET', `/api/mcp/servers?projectId=${projectId}`)).body.servers as { id: string; name: string }[];

async function openMcp(page: Page): Promise<void> {
  await signIn(page, server);
  await page.goto(`${server.url}/console/#/projects/${projectId}/mcp`);
  await page.getByRole('heading', { name: 'MCP servers', level: 2 }).waitFor();
}

describe('console: MCP servers', () => {
  it('adds server-everything by its URL with the transport detected, lists its tools, and deletes it after a confirmation naming it', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openMcp(page);
      await page.getByText('No MCP servers yet').waitFor();
      await expectAccessible(page, 'MCP servers (empty)');
      await page.getByRole('button', { name: 'Add server' }).first().click();
      await page.getByLabel('Name', { exact: true }).fill('everything');
      await page.getByLabel('URL', { exact: true }).fill(everythingUrl());
      await page.getByRole('button', { name: 'Detect transport' }).click();
      await page.locator('.detected').waitFor();
      expect(await page.locator('.detected').textContent()).toBe('Detected: Streamable HTTP (http); using http');
      expect(await page.getByLabel('Transport').inputValue()).toBe('http');
      await page.getByLabel('Headers').fill('Authorization: Bearer console-test-secret');
      await expectAccessible(page, 'add MCP server');
      await page.locator('form').getByRole('button', { name: 'Add server' }).click();
      const added = page.getByRole('status').filter({ hasText: 'Added everything' });
      await added.waitFor({ timeout: 20_000 });
      expect(await added.textContent()).toMatch(/^Added everything: \d+ tools$/);

      const item = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'everything' }) });
      expect(await item.locator('.muted').first().textContent()).toBe(`Streamable HTTP · ${everythingUrl()} · header Authorization (stored encrypted)`);
      expect(await page.content()).not.toContain('console-test-secret');
      await item.getByRole('button', { name: 'Show tools' }).click();
      const tools = page.getByRole('list', { name: 'Tools of everything' });
      await tools.waitFor({ timeout: 20_000 });
      const names = await tools.locator('summary code').allTextContents();
      expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      const echo = tools.locator('details', { has: page.locator('code', { hasText: /^echo$/ }) });
      await echo.locator('summary').click();
      expect(JSON.parse((await echo.locator('pre').textContent()) ?? '')).toMatchObject({ type: 'object', properties: { message: expect.any(Object) } });
      expect(await item.getByRole('button', { name: 'Hide tools' }).getAttribute('aria-expanded')).toBe('true');
      await expectAccessible(page, 'MCP servers with tools');
      await screenshot(page, 'mcp');

      await item.getByRole('button', { name: 'Delete everything' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete MCP server?' });
      expect(await dialog.textContent()).toContain('Delete the MCP server everything?');
      await dialog.getByRole('button', { name: 'Delete server' }).click();
      await page.getByText('No MCP servers yet').waitFor();
      expect(await servers()).toEqual([]);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("shows the service's refusal of a private address and of a server it cannot reach, at the URL, saving nothing", async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openMcp(page);
      await page.getByRole('button', { name: 'Add server' }).first().click();
      await page.getByLabel('Name', { exact: true }).fill('internal');
      const url = page.getByLabel('URL', { exact: true });
      const error = page.locator('#mcp-url-error');
      // The outbound policy refuses a private address before any connection.
      await url.fill('http://10.0.0.1/mcp');
      await page.getByRole('button', { name: 'Detect transport' }).click();
      await expect.poll(() => error.textContent()).toMatch(/^Refused to connect to 10\.0\.0\.1.*--allow-host/);
      expect(await url.getAttribute('aria-invalid')).toBe('true');
      await expectAccessible(page, 'MCP refused address');
      // Nothing listens there: detection says so; adding with a chosen transport names the address.
      const closed = `http://127.0.0.1:${await freePort()}/mcp`;
      await url.fill(closed);
      await page.getByRole('button', { name: 'Detect transport' }).click();
      await expect.poll(() => error.textContent()).toBe('Unable to detect transport types');
      await page.getByLabel('Transport').selectOption('http');
      await page.locator('form').getByRole('button', { name: 'Add server' }).click();
      await expect.poll(() => error.textContent(), { timeout: 20_000 }).toContain('127.0.0.1');
      expect(await servers()).toEqual([]);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows the MCP tool an answer called as a step named by its server', async () => {
    const added = await server.call('POST', '/api/mcp/add-server', { body: { projectId, name: 'everything', transport: 'http', url: everythingUrl() } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${projectId}/chat`);
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      server.upstream.script({ toolCalls: [{ name: 'mcp__everything__echo', arguments: '{"message":"hello from the console"}' }] }, { text: 'The server echoed it.' });
      await page.getByLabel('Question').fill('Echo something');
      await page.getByRole('button', { name: 'Send' }).click();
      const answer = page.locator('.turn.assistant').last();
      await expect.poll(() => answer.getAttribute('data-state'), { timeout: 20_000 }).toBe(null);
      const step = answer.locator('.step');
      expect(await step.locator('summary').textContent()).toBe('MCP server everything: echodone');
      await step.locator('summary').click();
      expect(await step.locator('pre.step-result').textContent()).toBe('Echo: hello from the console');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
