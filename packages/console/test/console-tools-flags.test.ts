import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, signIn, startConsoleServer } from './browser.js';

// A tool's switches in the tool form (requires approval, expose over MCP), set on create and
// changed on edit, kept by the service; and in the chat, the step of a call held for approval.
let browser: Browser;
let server: ConsoleServer;
let projectId: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer()]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Guarded desk', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

type Flags = { requiresApproval: boolean; exposeOverMcp: boolean };
const flagsOf = async (name: string): Promise<Flags> => {
  const { tools } = (await server.call('GET', `/api/tools?projectId=${projectId}`)).body as { tools: { id: string; name: string }[] };
  const id = tools.find((t) => t.name === name)?.id;
  const { tool } = (await server.call('GET', `/api/tools/${id}`)).body as { tool: Flags };
  return { requiresApproval: tool.requiresApproval, exposeOverMcp: tool.exposeOverMcp };
};
const approval = (page: Page) => page.getByLabel('Requires approval');
const expose = (page: Page) => page.getByLabel('Expose over MCP');

async function openTool(page: Page, name: string): Promise<void> {
  await page.goto(`${server.url}/console/#/projects/${projectId}/tools`);
  await page.reload();
  await page.getByRole('button', { name, exact: true }).click();
  await page.locator('.code-editor[data-state="ready"]').waitFor();
}

describe('console: tool switches', () => {
  it('creates a tool that requires approval and is exposed over MCP, keeps both after a reload, and changes them on edit', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${projectId}/tools`);
      await page.getByRole('button', { name: 'New tool' }).click();
      await page.getByLabel('Name', { exact: true }).fill('remove_file');
      expect([await approval(page).isChecked(), await expose(page).isChecked()]).toEqual([false, false]);
      expect(await page.locator('#tool-requiresApproval-hint').textContent()).toContain('wait until a person approves');
      expect(await page.locator('#tool-exposeOverMcp-hint').textContent()).toContain('MCP clients');
      await approval(page).check();
      await expose(page).check();
      await expectAccessible(page, 'tool form with switches');
      await page.getByRole('button', { name: 'Create tool' }).click();
      await page.getByRole('status').getByText('Tool created').waitFor();
      expect(await flagsOf('remove_file')).toEqual({ requiresApproval: true, exposeOverMcp: true });

      await openTool(page, 'remove_file');
      expect([await approval(page).isChecked(), await expose(page).isChecked()]).toEqual([true, true]);
      await expose(page).uncheck();
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('status').waitFor();
      await expect.poll(() => flagsOf('remove_file')).toEqual({ requiresApproval: true, exposeOverMcp: false });

      await openTool(page, 'remove_file');
      expect([await approval(page).isChecked(), await expose(page).isChecked()]).toEqual([true, false]);
      await approval(page).uncheck();
      await expose(page).check();
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => flagsOf('remove_file')).toEqual({ requiresApproval: false, exposeOverMcp: true });
      await openTool(page, 'remove_file');
      expect([await approval(page).isChecked(), await expose(page).isChecked()]).toEqual([false, true]);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows a call held for approval as a step waiting for approval, also after a reload, then done once approved', async () => {
    const made = await server.call('POST', '/api/tools/create', {
      body: {
        projectId,
        name: 'send_mail',
        language: 'javascript',
        code: 'async function main(args) {\n  return { sent: args.to };\n}',
        parameters: { type: 'object', properties: { to: { type: 'string' } } },
        requiresApproval: true,
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${projectId}/chat`);
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      server.upstream.script({ toolCalls: [{ name: 'send_mail', arguments: '{"to":"ops@example.com"}' }] }, { text: 'Sent.' });
      await page.getByLabel('Question').fill('Mail ops');
      await page.getByRole('button', { name: 'Send' }).click();
      const held = page.getByRole('listitem', { name: 'Approval of send_mail' });
      await held.waitFor({ timeout: 20_000 });
      const answer = page.locator('.turn.assistant').last();
      await expect.poll(() => answer.locator('.step summary').allTextContents()).toEqual(['Tool send_mailwaiting for approval']);
      expect(await answer.locator('.step').getAttribute('data-state')).toBe('waiting');
      // Reopened after a reload: the stored call has no result yet, and still waits.
      await page.reload();
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      await page.getByRole('navigation', { name: 'Chats' }).getByRole('button', { name: 'Mail ops' }).click();
      await held.waitFor({ timeout: 20_000 });
      await expect.poll(() => page.locator('.turn.assistant').last().locator('.step summary').allTextContents()).toEqual(['Tool send_mailwaiting for approval']);
      await held.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => page.locator('.turn.assistant').last().locator('.step summary').allTextContents(), { timeout: 20_000 }).toEqual(['Tool send_maildone']);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
