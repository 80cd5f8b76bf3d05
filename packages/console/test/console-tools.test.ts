import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

// The Tools tab (CodeMirror editor, run box, enable switch, delete) and the tool steps of a chat
// answer, in real Chromium against a real server: tools run in its JavaScript sandbox, the
// model is the loopback fake upstream. A tool time limit of 3 s makes the runaway case quick
// and leaves time to see a step running.
let browser: Browser;
let server: ConsoleServer;
let projectId: string;
beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer({ AGENT_PLATFORM_TOOL_TIMEOUT_MS: '3000' })]);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: 'Weather desk', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const WEATHER = `async function main(args) {
  console.log('looking up ' + args.city);
  return { city: args.city, temperature: 21 };
}`;
const TYPED = '\n// typed key by key: the quick brown fox jumps over the lazy dog 0123456789';
const CITY_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

/** A tool made through the API (for the cases about something else than creating one). */
async function apiTool(name: string, code: string, enabled = true): Promise<string> {
  const res = await server.call('POST', '/api/tools/create', { body: { projectId, name, language: 'javascript', code, parameters: CITY_SCHEMA, enabled } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.tool.id;
}

async function openTools(page: Page): Promise<void> {
  await signIn(page, server);
  await page.goto(`${server.url}/console/#/projects/${projectId}/tools`);
  await page.getByRole('heading', { name: 'Tools', level: 2 }).waitFor();
}

/** Opens a listed tool and waits until its editor is ready. */
async function openTool(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name, exact: true }).click();
  await page.locator('.code-editor[data-state="ready"]').waitFor();
}

/** Runs the open tool with `args` (JSON text) and waits for its outcome. */
async function run(page: Page, args: string): Promise<void> {
  await page.getByLabel('Arguments (JSON)').fill(args);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByRole('button', { name: 'Run', exact: true }).waitFor();
}

describe('console: tools', () => {
  it('creates a JavaScript tool in the code editor (highlighted, Tab leaves it) and runs it with arguments, showing result and logs', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openTools(page);
      await page.getByText('No tools yet').waitFor();
      await expectAccessible(page, 'tools (empty)');
      await page.getByRole('button', { name: 'New tool' }).click();
      // The editor is a chunk of its own, loaded now.
      await page.locator('.code-editor[data-state="ready"]').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('weather');
      await page.getByLabel('Description').fill('Current weather of a city');
      await page.getByLabel('Parameters (JSON Schema of the arguments)').fill(JSON.stringify(CITY_SCHEMA, null, 2));
      const editor = page.getByRole('textbox', { name: 'Code' });
      await editor.click();
      await page.keyboard.press('Control+A');
      await page.keyboard.insertText(WEATHER);
      // Keys typed one by one, as fast as the browser takes them, all reach the code.
      await page.keyboard.press('Control+End');
      await page.keyboard.type(TYPED);
      // Highlighted: keywords take the theme's keyword colour (--code-keyword), not the text's.
      const keyword = page.locator('.cm-content span', { hasText: /^function$/ }).first();
      expect(await keyword.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(157, 23, 77)');
      // The editor follows the console's theme switch (its colours are the theme's variables).
      await page.getByRole('button', { name: 'Switch to dark theme' }).click();
      expect(await keyword.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(240, 171, 252)');
      expect(await page.locator('.cm-editor').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(17, 19, 23)');
      await expectAccessible(page, 'tool editor (dark)');
      await page.getByRole('button', { name: 'Switch to light theme' }).click();
      // Tab is not trapped: it moves on to the next field and adds nothing to the code.
      await editor.click();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('tool-parameters');
      await page.keyboard.press('Shift+Tab');
      expect(await page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.getAttribute('aria-label'))).toBe('Code');
      await page.getByRole('button', { name: 'Create tool' }).click();
      await page.getByRole('status').getByText('Tool created').waitFor();

      const created = (await server.call('GET', `/api/tools?projectId=${projectId}`)).body.tools[0];
      const saved = (await server.call('GET', `/api/tools/${created.id}`)).body.tool;
      expect(saved).toMatchObject({ name: 'weather', description: 'Current weather of a city', language: 'javascript', enabled: true, parameters: CITY_SCHEMA, code: `${WEATHER}${TYPED}` });

      await run(page, '{"city": "Paris"}');
      const outcome = page.locator('.run-outcome');
      expect(await outcome.getAttribute('data-outcome')).toBe('ok');
      expect(JSON.parse((await outcome.locator('pre.result').textContent()) ?? '')).toEqual({ city: 'Paris', temperature: 21 });
      expect(await outcome.locator('pre.logs').textContent()).toBe('looking up Paris');
      await expectAccessible(page, 'tool editor and run');
      await screenshot(page, 'tools');

      // Arguments the schema refuses: the service's 400 (ajv's `args.city must be string`) said for people.
      await run(page, '{"city": 5}');
      await expect.poll(() => page.getByRole('alert').allTextContents()).toEqual(['Invalid arguments for tool weather: city must be text']);
      // Not JSON: said next to the box, nothing sent.
      await run(page, '{city}');
      expect(await page.locator('#run-args-error').textContent()).toContain('Not valid JSON');

      // Edited and saved: the run uses the new code.
      await page.getByRole('textbox', { name: 'Code' }).click();
      await page.keyboard.press('Control+A');
      await page.keyboard.insertText(WEATHER.replace('21', '25'));
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').getByText('Tool updated').waitFor();
      await page.locator('.code-editor[data-state="ready"]').waitFor();
      await run(page, '{"city": "Oslo"}');
      expect(JSON.parse((await page.locator('.run-outcome pre.result').textContent()) ?? '')).toEqual({ city: 'Oslo', temperature: 25 });
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("shows a thrown error with the logs before it, and a runaway tool's time-out", async () => {
    await apiTool('fails', "function main(args) { console.log('about to fail for ' + args.city); throw new Error('city not found: ' + args.city); }");
    await apiTool('spins', 'function main() { for (;;) {} }');
    const { context, page, problems } = await openPage(browser);
    try {
      await openTools(page);
      await openTool(page, 'fails');
      await run(page, '{"city": "Atlantis"}');
      const outcome = page.locator('.run-outcome');
      expect(await outcome.getAttribute('data-outcome')).toBe('failed');
      expect(await outcome.getByRole('heading', { level: 3 }).first().textContent()).toBe('The tool threw an error');
      expect(await outcome.getByRole('alert').textContent()).toContain('city not found: Atlantis');
      expect(await outcome.locator('pre.logs').textContent()).toBe('about to fail for Atlantis');
      await expectAccessible(page, 'tool error');

      await page.getByRole('button', { name: '← All tools' }).click();
      await openTool(page, 'spins');
      await run(page, '{"city": "Nowhere"}');
      expect(await outcome.getByRole('heading', { level: 3 }).first().textContent()).toBe('The tool ran out of time');
      expect(await outcome.getByRole('alert').textContent()).toBe('the tool ran longer than 3000 ms');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('switches a tool off and on from the list and from its page', async () => {
    const id = await apiTool('toggled', 'function main() { return 1; }');
    const enabled = async () => (await server.call('GET', `/api/tools/${id}`)).body.tool.enabled;
    const { context, page, problems } = await openPage(browser);
    try {
      await openTools(page);
      const toggle = page.getByRole('switch', { name: 'toggled enabled' });
      expect(await toggle.isChecked()).toBe(true);
      await toggle.click();
      await expect.poll(enabled).toBe(false);
      expect(await toggle.isChecked()).toBe(false);
      await expectAccessible(page, 'tools list');
      // The keyboard alone: Space on the focused switch.
      await toggle.focus();
      await page.keyboard.press('Space');
      await expect.poll(enabled).toBe(true);
      await openTool(page, 'toggled');
      await page.getByRole('switch', { name: 'toggled enabled' }).click();
      await expect.poll(enabled).toBe(false);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("shows the service's message next to the field: a bad parameters schema, a bad name; JSON that does not parse is caught first", async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openTools(page);
      await page.getByRole('button', { name: 'New tool' }).click();
      await page.locator('.code-editor[data-state="ready"]').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('schema_test');
      // Python: the untouched template becomes Python's, highlighted by the Python grammar (its own chunk).
      await page.getByLabel('Language').selectOption('python');
      await expect.poll(() => page.getByRole('textbox', { name: 'Code' }).textContent()).toContain('def main(args):');
      const def = page.locator('.cm-content span', { hasText: /^def$/ }).first();
      await expect.poll(() => def.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(157, 23, 77)');
      expect(await page.getByLabel('Dependencies').getAttribute('placeholder')).toBe('e.g. attrs');
      await page.getByLabel('Language').selectOption('javascript');
      await expect.poll(() => page.getByRole('textbox', { name: 'Code' }).textContent()).toContain('async function main(args)');
      const parameters = page.getByLabel('Parameters (JSON Schema of the arguments)');
      await parameters.fill('{"type": "object", "properties": {"a": {"type": "nonsense"}}}');
      await page.getByRole('button', { name: 'Create tool' }).click();
      const error = page.locator('#tool-parameters-error');
      await expect.poll(() => error.textContent()).toMatch(/^Parameters is not a valid JSON Schema: /);
      expect(await parameters.getAttribute('aria-invalid')).toBe('true');
      expect(await parameters.getAttribute('aria-describedby')).toBe('tool-parameters-error');
      await expectAccessible(page, 'tool form with errors');
      await screenshot(page, 'tool-schema-error');

      await parameters.fill('{"type": "object",');
      await page.getByRole('button', { name: 'Create tool' }).click();
      await expect.poll(() => error.textContent()).toContain('Not valid JSON');

      await parameters.fill('{"type": "object"}');
      await page.getByLabel('Name', { exact: true }).fill('has space');
      await page.getByRole('button', { name: 'Create tool' }).click();
      await expect.poll(() => page.locator('#tool-name-error').textContent()).toBe('Name must be 1-64 letters, digits, _ or -');
      expect((await server.call('GET', `/api/tools?projectId=${projectId}`)).body.tools.map((t: { name: string }) => t.name)).not.toContain('schema_test');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('deletes a tool after a confirmation that names it', async () => {
    const id = await apiTool('doomed', 'function main() { return 1; }');
    const { context, page, problems } = await openPage(browser);
    try {
      await openTools(page);
      await page.getByRole('button', { name: 'Delete doomed' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete tool?' });
      expect(await dialog.textContent()).toContain('Delete the tool doomed?');
      await expectAccessible(page, 'delete tool dialog');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await server.call('GET', `/api/tools/${id}`)).status).toBe(200);
      await page.getByRole('button', { name: 'Delete doomed' }).click();
      await dialog.getByRole('button', { name: 'Delete tool' }).click();
      await page.getByRole('button', { name: 'doomed', exact: true }).waitFor({ state: 'detached' });
      expect((await server.call('GET', `/api/tools/${id}`)).status).toBe(404);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});

describe('console: tool steps of a chat answer', () => {
  it('shows each tool call as a collapsible step with its arguments and result (or error), live and when the chat is reopened', async () => {
    // The weather tool of the first case, as the agent has it now (enabled).
    const tools = (await server.call('GET', `/api/tools?projectId=${projectId}&limit=100`)).body.tools as { id: string; name: string }[];
    const weather = tools.find((t) => t.name === 'weather');
    if (!weather) await apiTool('weather', WEATHER);
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${projectId}/chat`);
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      server.upstream.script(
        {
          toolCalls: [
            { name: 'weather', arguments: '{"city":"Paris"}' },
            { name: 'missing', arguments: '{}' },
          ],
        },
        { text: 'It is warm in Paris today, and the other tool does not exist.', chunkDelayMs: 150 },
      );
      await page.getByLabel('Question').fill('What is the weather in Paris?');
      await page.getByRole('button', { name: 'Send' }).click();
      const answer = page.locator('.turn.assistant').last();
      const steps = answer.locator('.step');
      // Live: the steps are there while the answer is still streaming.
      await expect.poll(async () => (await answer.getAttribute('data-state')) === 'streaming' && (await steps.count()) === 2, { timeout: 20_000 }).toBe(true);
      const expectSteps = async () => {
        expect(await steps.locator('summary').allTextContents()).toEqual(['Tool weatherdone', 'Tool missingfailed']);
        // Collapsed until opened (a native <details>).
        expect(await steps.first().locator('details').getAttribute('open')).toBe(null);
        await steps.first().locator('summary').click();
        expect(JSON.parse((await steps.first().locator('pre.step-arguments').textContent()) ?? '')).toEqual({ city: 'Paris' });
        expect(JSON.parse((await steps.first().locator('pre.step-result').textContent()) ?? '')).toMatchObject({ city: 'Paris', temperature: expect.any(Number) });
        await steps.nth(1).locator('summary').press('Enter');
        expect(await steps.nth(1).locator('details').getAttribute('open')).toBe('');
        expect(await steps.nth(1).locator('pre.step-error').textContent()).toBe('Error: There is no tool named missing');
      };
      await expectSteps();
      await expect.poll(() => answer.getAttribute('data-state'), { timeout: 20_000 }).toBe(null);
      expect(await answer.locator('.text').textContent()).toBe('It is warm in Paris today, and the other tool does not exist.');
      await expectAccessible(page, 'chat with tool steps');
      await screenshot(page, 'chat-tool-steps');

      // Reopened: the same steps, from the chat's stored messages.
      const chats = page.getByRole('navigation', { name: 'Chats' });
      await chats.getByRole('button', { name: 'New chat' }).click();
      await page.getByText('Ask the agent').waitFor();
      await chats.getByRole('button', { name: 'What is the weather in Paris?' }).click();
      await expect.poll(() => steps.count(), { timeout: 10_000 }).toBe(2);
      await expectSteps();
      expect(await answer.locator('.text').textContent()).toBe('It is warm in Paris today, and the other tool does not exist.');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows a step running while its tool runs; stopped then, the step has no result', async () => {
    const tools = (await server.call('GET', `/api/tools?projectId=${projectId}&limit=100`)).body.tools as { name: string }[];
    if (!tools.some((t) => t.name === 'spins')) await apiTool('spins', 'function main() { for (;;) {} }');
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.goto(`${server.url}/console/#/projects/${projectId}/chat`);
      await page.getByRole('heading', { name: 'Chats' }).waitFor();
      server.upstream.script({ toolCalls: [{ name: 'spins', arguments: '{"city":"Oslo"}' }] });
      await page.getByLabel('Question').fill('Spin for me');
      await page.getByRole('button', { name: 'Send' }).click();
      const step = page.locator('.turn.assistant').last().locator('.step');
      await expect.poll(() => step.locator('summary').textContent(), { timeout: 10_000 }).toBe('Tool spinsrunning…');
      await page.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => page.locator('.turn.assistant').last().getAttribute('data-state')).toBe('stopped');
      expect(await step.locator('summary').textContent()).toBe('Tool spinsno result');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
