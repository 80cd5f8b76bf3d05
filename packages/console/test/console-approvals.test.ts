import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, signIn, startConsoleServer } from './browser.js';

// What waits for the person in the chat: a project tool marked requiresApproval (approved,
// denied with a reason, listed again after a reload), and a question of a real MCP server
// (server-everything's trigger-elicitation-request) answered in a form built from its fields.
let browser: Browser;
let server: ConsoleServer;
let everything: ServerProcess;
let projectId: string;
beforeAll(async () => {
  [browser, server, everything] = await Promise.all([launchBrowser(), startConsoleServer(), startEverything('streamableHttp')]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Careful agent', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const tool = await server.call('POST', '/api/tools/create', {
    body: {
      projectId,
      name: 'remove_file',
      language: 'javascript',
      code: 'async function main(args) {\n  return { removed: args.path };\n}',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      requiresApproval: true,
    },
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await everything?.stop();
});

const answer = (page: Page) => page.locator('.turn.assistant').last();
const approval = (page: Page) => page.getByRole('listitem', { name: 'Approval of remove_file' });

async function openChat(page: Page): Promise<void> {
  await signIn(page, server);
  await page.goto(`${server.url}/console/#/projects/${projectId}/chat`);
  await page.getByRole('heading', { name: 'Chats' }).waitFor();
}

/** Asks so that the model calls remove_file, and waits for the approval to show. */
async function askToRemove(page: Page, question: string, then: string): Promise<void> {
  server.upstream.script({ toolCalls: [{ name: 'remove_file', arguments: '{"path":"/tmp/report.txt"}' }] }, { text: then });
  await page.getByLabel('Question').fill(question);
  await page.getByRole('button', { name: 'Send' }).click();
  await approval(page).waitFor({ timeout: 20_000 });
  expect(JSON.parse((await approval(page).locator('pre').textContent()) ?? '')).toEqual({ path: '/tmp/report.txt' });
}

describe('console: approvals in the chat', () => {
  it('shows a paused call with its arguments; Approve runs it and streams the rest of the answer', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      await askToRemove(page, 'Remove the old report', 'The report is gone.');
      expect(await approval(page).locator('p').first().textContent()).toBe('Approve this call? Tool remove_file');
      await expectAccessible(page, 'chat with an approval');
      await approval(page).getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => answer(page).locator('.text').textContent(), { timeout: 20_000 }).toBe('The report is gone.');
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 10_000 }).toBe(null);
      expect(await approval(page).count()).toBe(0);
      // The model was given the tool's result.
      expect(JSON.stringify(server.upstream.requests.at(-1)?.messages)).toContain('removed');
      expect(await answer(page).locator('.step summary').allTextContents()).toEqual(['Tool remove_filedone']);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('lists the pending approval again after a reload; Deny with a reason gives the model the denial', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      await askToRemove(page, 'Remove the report again', 'I did not remove it.');
      const id = (await server.call('GET', '/api/v1/approvals?state=pending')).body.approvals[0].id as string;
      await page.reload();
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      await page.getByRole('navigation', { name: 'Chats' }).getByRole('button', { name: 'Remove the report again' }).click();
      await approval(page).waitFor({ timeout: 10_000 });
      expect(JSON.parse((await approval(page).locator('pre').textContent()) ?? '')).toEqual({ path: '/tmp/report.txt' });
      await approval(page)
        .getByLabel(/^Reason/)
        .fill('Keep it for the audit');
      await approval(page).getByRole('button', { name: 'Deny' }).click();
      await expect.poll(() => answer(page).locator('.text').textContent(), { timeout: 20_000 }).toBe('I did not remove it.');
      const denial = JSON.stringify(server.upstream.requests.at(-1)?.messages);
      expect(denial).toContain('The user denied this tool call: Keep it for the audit. It was not run.');
      expect((await server.call('GET', `/api/v1/approvals/${id}`)).body.approval).toMatchObject({ state: 'denied', reason: 'Keep it for the audit' });
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows a call decided elsewhere with the service refusing a second decision', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      await askToRemove(page, 'Remove it a third time', 'Done.');
      const id = (await server.call('GET', '/api/v1/approvals?state=pending')).body.approvals[0].id as string;
      const other = await server.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'deny', reason: 'no' } });
      expect(other.status).toBe(200);
      await approval(page).getByRole('button', { name: 'Approve' }).click();
      const note = approval(page).getByRole('alert');
      await expect.poll(() => note.textContent(), { timeout: 10_000 }).toMatch(/already/i);
      expect(await approval(page).getByRole('button', { name: 'Approve' }).count()).toBe(0);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});

describe('console: the continuation and the open chat across reloads', () => {
  it('follows the continuation after Approve again when the page is reloaded during it, without deciding or asking twice', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      const full = Array.from({ length: 30 }, (_, i) => `gone${i + 1}`).join(' ');
      server.upstream.script({ toolCalls: [{ name: 'remove_file', arguments: '{"path":"/tmp/slow.txt"}' }] }, { text: full, chunkDelayMs: 150 });
      const before = server.upstream.requests.length;
      await page.getByLabel('Question').fill('Remove the slow report');
      await page.getByRole('button', { name: 'Send' }).click();
      await approval(page).waitFor({ timeout: 20_000 });
      const chatId = decodeURIComponent(page.url().split('/').at(-1) ?? '');
      expect(chatId).toMatch(/^chat_/);
      await approval(page).getByRole('button', { name: 'Approve' }).click();
      await expect.poll(async () => ((await answer(page).locator('.text').textContent()) ?? '').split(' ').length, { timeout: 20_000 }).toBeGreaterThan(3);
      // The continuation is still streaming: nothing of it is stored yet.
      expect((await server.call('GET', `/api/chats/${chatId}/messages`)).body.messages.at(-1)).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'remove_file' }] });
      await page.reload();
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      // The paused turn as stored, then the continuation, replayed and followed to its end.
      await expect.poll(() => answer(page).locator('.text').textContent(), { timeout: 30_000 }).toBe(full);
      await expect.poll(() => answer(page).getAttribute('data-state'), { timeout: 10_000 }).toBe(null);
      expect(await page.locator('.turn.user').last().textContent()).toBe('You:Remove the slow report');
      expect(await approval(page).count()).toBe(0);
      // One model call for the pause, one for the continuation: the reload decided nothing and asked nothing again.
      expect(server.upstream.requests.length).toBe(before + 2);
      const stored = (await server.call('GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string | null }[];
      expect(stored.filter((m) => m.role === 'assistant' && m.content === full)).toHaveLength(1);
      expect(await page.evaluate(() => sessionStorage.getItem('agent-platform.pending-answer'))).toBe(null);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('keeps the open chat in the address: a reload opens it again, Back returns to the one before', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      const chatWith = async (name: string) => {
        const chat = (await server.call('POST', '/api/chats', { body: { projectId, name } })).body.chat as { id: string; name: string };
        server.upstream.script({ text: `About ${name}.` });
        expect((await server.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId: chat.id, messages: [{ role: 'user', content: `Tell me about ${name}` }] } })).status).toBe(
          200,
        );
        return chat;
      };
      const first = await chatWith('First topic');
      const second = await chatWith('Second topic');
      await openChat(page);
      const nav = page.getByRole('navigation', { name: 'Chats' });
      await nav.getByRole('button', { name: first.name }).click();
      await page.getByRole('heading', { name: first.name, level: 2 }).waitFor();
      await nav.getByRole('button', { name: second.name }).click();
      await page.getByRole('heading', { name: second.name, level: 2 }).waitFor();
      expect(new URL(page.url()).hash).toBe(`#/projects/${projectId}/chat/${second.id}`);
      await page.reload();
      await page.getByRole('heading', { name: second.name, level: 2 }).waitFor({ timeout: 10_000 });
      expect(await nav.getByRole('button', { name: second.name }).getAttribute('aria-current')).toBe('true');
      await expect.poll(() => page.locator('.turn.user').first().textContent()).toBe('You:Tell me about Second topic');
      await page.goBack();
      await page.getByRole('heading', { name: first.name, level: 2 }).waitFor({ timeout: 10_000 });
      await expect.poll(() => page.locator('.turn.user').first().textContent()).toBe('You:Tell me about First topic');
      // New chat: the address names none.
      await page.getByRole('button', { name: 'New chat' }).click();
      await page.getByRole('heading', { name: 'New chat', level: 2 }).waitFor();
      expect(new URL(page.url()).hash).toBe(`#/projects/${projectId}/chat`);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});

describe("console: an MCP server's question in the chat", () => {
  it('shows the form with its defaults; a wrong value is refused at its field; the answer goes to the tool', async () => {
    const added = await server.call('POST', '/api/mcp/add-server', { body: { projectId, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp` } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    for (let i = 0; i < 100; i++) {
      const tools = (await server.call('GET', `/api/mcp/servers/${added.body.server.id}/tools`)).body.tools as { name: string }[];
      if (tools.some((t) => t.name === 'trigger-elicitation-request')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const { context, page, problems } = await openPage(browser);
    try {
      await openChat(page);
      server.upstream.script({ toolCalls: [{ name: 'mcp__everything__trigger-elicitation-request', arguments: '{}' }] }, { text: 'Thanks for the details.' });
      await page.getByLabel('Question').fill('Fill in the form');
      await page.getByRole('button', { name: 'Send' }).click();
      const form = page.getByRole('listitem', { name: 'Question of mcp__everything__trigger-elicitation-request' });
      await form.waitFor({ timeout: 20_000 });
      expect(await form.textContent()).toContain('Please provide inputs for the following fields:');
      const integer = form.locator('input[id$="-integer"]');
      expect(await integer.inputValue()).toBe('42');
      await expectAccessible(page, 'chat with a question');
      // Out of bounds and the required name left out: the service's 400, at each field.
      await integer.fill('500');
      await form.getByRole('button', { name: 'Submit' }).click();
      await expect.poll(() => form.locator('[id$="-integer-error"]').textContent(), { timeout: 10_000 }).toMatch(/100/);
      expect(await form.locator('[id$="-name-error"]').textContent()).toMatch(/required/i);
      await integer.fill('7');
      await form.locator('input[id$="-name"]').fill('Ada Lovelace');
      await form.getByRole('button', { name: 'Submit' }).click();
      await expect.poll(() => answer(page).locator('.text').textContent(), { timeout: 20_000 }).toBe('Thanks for the details.');
      expect(await form.count()).toBe(0);
      const result = JSON.stringify(server.upstream.requests.at(-1)?.messages);
      expect(result).toContain('Name: Ada Lovelace');
      expect(result).toContain('Favorite Integer: 7');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
