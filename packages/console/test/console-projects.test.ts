import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

let browser: Browser;
let server: ConsoleServer;
beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the accessibility check', () => {
  it('catches a serious violation (an input without a label), so its passes mean something', async () => {
    const { context, page } = await openPage(browser);
    try {
      await page.setContent('<!doctype html><html lang="en"><title>t</title><main><input type="text"></main></html>');
      await expect(expectAccessible(page, 'unlabelled input')).rejects.toThrow(/label/);
    } finally {
      await context.close();
    }
  });
});

describe('console: sign-in', () => {
  it('refuses a wrong key with the service message, then keeps a right one in session storage only (never in a URL)', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      const seen: string[] = [];
      page.on('request', (request) => seen.push(request.url()));
      await page.goto(`${server.url}/`);
      expect(page.url()).toBe(`${server.url}/console/`);
      await expectAccessible(page, 'sign-in');
      await screenshot(page, 'sign-in');
      await page.getByLabel('API key').fill('ap_wrongwrongwrongwrongwrongwrongwrongwrongwrong');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Unauthorized');
      await page.getByLabel('API key').fill(server.keyA);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      const storage = await page.evaluate(() => ({ session: JSON.stringify(sessionStorage), local: JSON.stringify(localStorage), cookie: document.cookie }));
      expect(storage.session).toContain(server.keyA);
      expect(storage.local).not.toContain(server.keyA);
      expect(storage.cookie).toBe('');
      expect(seen.filter((url) => url.includes(server.keyA))).toEqual([]);
      expect(page.url()).not.toContain(server.keyA);
      // A new tab (a new session) has to sign in again.
      const other = await context.newPage();
      await other.goto(`${server.url}/console/`);
      await other.getByLabel('API key').waitFor();
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });
});

describe('console: Content-Security-Policy', () => {
  it('holds in the browser: an injected inline script does not run, eval throws, another origin is not reached', async () => {
    const { context, page } = await openPage(browser);
    try {
      await page.goto(`${server.url}/console/`);
      await page.getByLabel('API key').waitFor();
      const result = await page.evaluate(async () => {
        const violations: string[] = [];
        document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
        const script = document.createElement('script');
        script.textContent = 'window.inlineRan = true';
        document.head.append(script);
        // Later, in a task of the page's own (the DevTools evaluation itself is exempt from CSP).
        const evalResult = await new Promise<string>((done) =>
          setTimeout(() => {
            try {
              // biome-ignore lint/security/noGlobalEval: the point is that the page's CSP refuses it.
              const indirect = globalThis.eval;
              indirect('1 + 1');
              done('ran');
            } catch (error) {
              done((error as Error).name);
            }
          }, 0),
        );
        let fetched = 'reached';
        try {
          await fetch('http://127.0.0.2:9/x');
        } catch {
          fetched = 'refused';
        }
        await new Promise((r) => setTimeout(r, 100));
        return { inlineRan: 'inlineRan' in window, evalResult, fetched, violations };
      });
      expect(result.inlineRan).toBe(false);
      expect(result.evalResult).toBe('EvalError');
      expect(result.fetched).toBe('refused');
      expect(result.violations).toEqual(expect.arrayContaining(['script-src-elem', 'connect-src']));
    } finally {
      await context.close();
    }
  });
});

describe('console: projects', () => {
  it('creates, finds, pages, edits and deletes projects (with confirmation), showing the service messages', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.getByText('No projects yet').waitFor();
      await expectAccessible(page, 'projects (empty)');

      // Create, with a 400 of the service shown next to its field first.
      await page.getByRole('button', { name: 'New project' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Support desk');
      await page.getByLabel('Colour').fill('x'.repeat(60));
      await page.getByRole('button', { name: 'Create project' }).click();
      await expect.poll(() => page.locator('#project-color-error').textContent()).toBe('Colour must have at most 50 characters');
      await page.getByLabel('Colour').fill('#2563eb');
      await page.getByLabel('Description').fill('Answers customer questions');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('link', { name: 'Support desk' }).waitFor();

      // Twenty-five more through the API: two pages of twenty, and a search.
      for (let i = 1; i <= 25; i++) await server.call('POST', '/api/projects/create', { body: { name: `Agent ${String(i).padStart(2, '0')}`, model: 'gpt-4o-mini', provider: 'openai' } });
      await page.reload();
      await page.getByText('1–20 of 26').waitFor();
      await page.getByRole('button', { name: 'Next' }).click();
      await page.getByText('21–26 of 26').waitFor();
      await expect.poll(() => page.getByRole('link', { name: 'Support desk' }).count()).toBe(1);
      await page.getByLabel('Search by name').fill('agent 1');
      await page.getByText('Agent 19').waitFor();
      await expect.poll(() => page.locator('table.list tbody tr').count()).toBe(10);
      await page.getByLabel('Search by name').fill('nothing like this');
      await page.getByText('No project\'s name contains "nothing like this"').waitFor();
      await page.getByLabel('Search by name').fill('support');
      await page.getByRole('link', { name: 'Support desk' }).waitFor();
      await expectAccessible(page, 'projects');
      await screenshot(page, 'projects');

      // Edit.
      await page.getByRole('button', { name: 'Edit Support desk' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Help desk');
      await page.getByLabel('Model', { exact: true }).fill('gpt-4.1-mini');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByLabel('Search by name').fill('help');
      await page.getByRole('link', { name: 'Help desk' }).waitFor();
      await page.getByText('openai: gpt-4.1-mini').waitFor();

      // Delete: cancel keeps it, confirm removes it.
      await page.getByRole('button', { name: 'Delete Help desk' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => page.getByRole('link', { name: 'Help desk' }).count()).toBe(1);
      await page.getByRole('button', { name: 'Delete Help desk' }).click();
      await expectAccessible(page, 'delete confirmation');
      await page.getByRole('dialog').getByRole('button', { name: 'Delete project' }).click();
      await page.getByText('No project\'s name contains "help"').waitFor();
      const left = await server.call('GET', '/api/v1/projects?searchWord=help');
      expect(left.body.total).toBe(0);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });

  it('sets instructions apart from the description, picks a credential of the provider and a model its upstream lists, and keeps free text', async () => {
    const credential = (await server.call('POST', '/api/v1/credentials', { body: { name: 'Team key', provider: 'openai', apiKey: 'sk-team-key-4321', baseUrl: server.upstream.url } })).body.credential;
    const ollamaKey = (await server.call('POST', '/api/v1/credentials', { body: { name: 'Ollama box', provider: 'ollama', apiKey: 'none-1234', baseUrl: 'http://127.0.0.1:9' } })).body.credential;
    const { context, page, problems } = await openPage(browser);
    try {
      const asked: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/models')) asked.push(new URL(r.url()).pathname + new URL(r.url()).search);
      });
      await signIn(page, server);
      await page.getByRole('button', { name: 'New project' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Instructed');
      // The default credential's upstream (the first openai credential: the default) lists its models.
      const options = () => page.locator('#project-model-options option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
      await expect.poll(options).toEqual(['gpt-test', 'gpt-test-mini']);
      await page.getByText(`2 models offered by ${server.upstream.url}`).waitFor();
      const credentials = () => page.locator('#project-credentialId option').evaluateAll((els) => els.map((e) => e.textContent));
      expect(await credentials()).toEqual(['Default (Team key)', 'Team key (…4321)']);
      await page.getByLabel('Credential').selectOption(credential.id);
      await expect.poll(() => asked.at(-1)).toBe(`/api/v1/credentials/${credential.id}/models`);
      await expect.poll(options).toEqual(['gpt-test', 'gpt-test-mini']);
      await expectAccessible(page, 'project form');

      // Another provider: its credentials only; an upstream that is down says so, typing stays possible.
      await page.getByLabel('Provider', { exact: true }).selectOption('ollama');
      expect(await credentials()).toEqual(['Default (Ollama box)', 'Ollama box (…1234)']);
      await page.getByLabel('Credential').selectOption(ollamaKey.id);
      await page.getByText(/^Could not list the provider's models: .*unreachable.*Type the model name\.$/).waitFor();
      await page.getByLabel('Provider', { exact: true }).selectOption('openai');
      expect(await page.getByLabel('Credential').inputValue()).toBe('');
      await page.getByLabel('Credential').selectOption(credential.id);
      await page.getByLabel('Model', { exact: true }).fill('my-fine-tune');
      await page.getByLabel('Description').fill('Answers refund mail (for the team)');
      await page.getByLabel('Instructions').fill('You are the refunds agent.\nAnswer in two sentences.');
      await page.getByText('(51 of 32,000 characters)', { exact: false }).waitFor();
      await page.locator('#project-form-title').scrollIntoViewIfNeeded();
      await screenshot(page, 'project-form');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('link', { name: 'Instructed' }).waitFor();
      const created = (await server.call('GET', '/api/v1/projects?searchWord=Instructed')).body.projects[0];
      expect(created).toMatchObject({
        model: 'my-fine-tune',
        provider: 'openai',
        credentialId: credential.id,
        description: 'Answers refund mail (for the team)',
        instructions: 'You are the refunds agent.\nAnswer in two sentences.',
      });

      // Editing shows them back; a 400 on instructions lands next to the field.
      await page.getByRole('button', { name: 'Edit Instructed' }).click();
      expect(await page.getByLabel('Instructions').inputValue()).toBe('You are the refunds agent.\nAnswer in two sentences.');
      // The credential's option arrives with the provider's credentials, after the form opens.
      await expect.poll(() => page.getByLabel('Credential').inputValue()).toBe(credential.id);
      await page.getByLabel('Instructions').fill('x'.repeat(32_001));
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.locator('#project-instructions-error').textContent()).toBe('Instructions must have at most 32000 characters');
      await page.getByLabel('Instructions').fill('Be brief.');
      await page.getByLabel('Credential').selectOption('');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(async () => (await server.call('GET', `/api/v1/projects/${created.id}`)).body.project).toMatchObject({ instructions: 'Be brief.', credentialId: null });
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('works with the keyboard alone and in the dark theme', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.getByRole('button', { name: /Switch to (dark|light) theme/ }).click();
      const theme = await page.evaluate(() => document.documentElement.dataset.theme);
      expect(theme === 'dark' || theme === 'light').toBe(true);
      if (theme !== 'dark') await page.getByRole('button', { name: 'Switch to dark theme' }).click();
      await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
      await expectAccessible(page, 'projects (dark)');
      await screenshot(page, 'projects-dark');
      // From the top: Tab reaches "New project", Enter opens the form, typing and Enter create.
      await page.keyboard.press('Tab');
      let focused = '';
      for (let i = 0; i < 12 && focused !== 'New project'; i++) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
      }
      expect(focused).toBe('New project');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Keyboard project');
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement).id)).toBe('project-name');
      await page.keyboard.press('Enter');
      await page.getByRole('link', { name: 'Keyboard project' }).waitFor();
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });
});
