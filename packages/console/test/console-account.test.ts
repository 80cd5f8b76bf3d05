import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from '../../core/test/ollama-server.js';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

// Credentials, API keys and local models, in real Chromium against a real server whose default
// Ollama runtime is the fake one the server's own local model tests use.

let browser: Browser;
let server: ConsoleServer;
let ollama: OllamaTestServer;
beforeAll(async () => {
  ollama = await startOllamaServer();
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer({ OLLAMA_HOST: ollama.url })]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await ollama?.close();
});

/** Everywhere in the page a secret could show: the HTML, every field's value, both storages. */
const everything = (page: Page) =>
  page.evaluate(() =>
    [
      document.documentElement.outerHTML,
      ...[...document.querySelectorAll('input, textarea')].map((e) => (e as HTMLInputElement).value),
      JSON.stringify(sessionStorage),
      JSON.stringify(localStorage),
    ].join('\n'),
  );

const go = async (page: Page, hash: string, heading: string) => {
  await page.goto(`${server.url}/console/${hash}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
};

describe('console: credentials', () => {
  it('adds, lists, edits and deletes credentials; the secret never reaches the page', async () => {
    const secret = 'sk-console-test-0123456789abcdefWXYZ';
    const replaced = 'sk-console-replaced-9876543210QRST';
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.getByRole('link', { name: 'Credentials' }).click();
      await page.getByText('No credentials yet').waitFor();
      await expectAccessible(page, 'credentials (empty)');

      // Add: the service's 400 lands next to the base URL field; then a good one is listed.
      await page.getByRole('button', { name: 'New credential' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Team OpenAI');
      await page.getByLabel('API key').fill(secret);
      await page.getByLabel('Base URL').fill('ftp://llm.example.com/v1');
      await page.getByRole('button', { name: 'Add credential' }).click();
      await expect.poll(() => page.locator('#credential-baseUrl-error').textContent()).toMatch(/^Base URL must be an http or https URL/);
      await page.getByLabel('Base URL').fill(server.upstream.url);
      await page.getByRole('button', { name: 'Add credential' }).click();
      const row = page.getByRole('row', { name: /Team OpenAI/ });
      await row.waitFor();
      expect(await row.textContent()).toContain('…WXYZ');
      expect(await row.textContent()).toContain(server.upstream.url);
      expect(await everything(page)).not.toContain(secret);

      // A project that names it is shown beside it.
      const [{ id }] = (await server.call('GET', '/api/v1/credentials')).body.credentials;
      const project = await server.call('POST', '/api/projects/create', { body: { name: 'Uses team key', model: 'gpt-4o-mini', provider: 'openai', credentialId: id } });
      await page.reload();
      await row.getByRole('link', { name: 'Uses team key' }).waitFor();
      expect(await everything(page)).not.toContain(secret);
      await expectAccessible(page, 'credentials');
      await screenshot(page, 'credentials');

      // Edit: a new name and key; only the new key's last four characters come back.
      await page.getByRole('button', { name: 'Edit Team OpenAI' }).click();
      await expect.poll(() => page.getByLabel('Base URL').inputValue()).toBe(server.upstream.url);
      await page.getByLabel('Name', { exact: true }).fill('Team key');
      await page.getByLabel('New API key').fill(replaced);
      await page.getByRole('button', { name: 'Save' }).click();
      await page
        .getByRole('row', { name: /Team key/ })
        .getByText('…QRST')
        .waitFor();
      expect(await everything(page)).not.toContain(replaced);

      // Delete: refused (409) while a project names it, with the service's message; then done.
      await page.getByRole('button', { name: 'Delete Team key' }).click();
      await page.getByRole('dialog').getByText('Named by Uses team key').waitFor();
      await expectAccessible(page, 'delete credential');
      await page.getByRole('dialog').getByRole('button', { name: 'Delete credential' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/is named by project .*: set their credentialId to another credential or null first/);
      expect(await page.getByRole('row', { name: /Team key/ }).count()).toBe(1);
      // Named by none, the project uses its provider's default: this one (the first), still refused.
      await server.call('PATCH', `/api/v1/projects/${project.body.project.id}`, { body: { credentialId: null } });
      await page.getByRole('button', { name: 'Delete Team key' }).click();
      await page.getByRole('dialog').getByText('It is the default for openai').waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete credential' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/is the default openai credential, used by project .* \(they name no credential\)/);
      await server.call('DELETE', `/api/v1/projects/${project.body.project.id}`);
      await page.getByRole('button', { name: 'Delete Team key' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete credential' }).click();
      await page.getByText('No credentials yet').waitFor();
      expect((await server.call('GET', '/api/v1/credentials')).body.credentials).toEqual([]);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });
});

describe('console: testing credentials and the default', () => {
  it('tests a credential (ok, the provider refusing the key), moves the default, and edits the base URL (a refused address at the field)', async () => {
    const right = 'sk-console-right-key-0123AAAA';
    const wrong = 'sk-console-wrong-key-4567BBBB';
    const fake = await startFakeChatServer({ apiKey: right });
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await go(page, '#/credentials', 'Credentials');
      const add = async (name: string, key: string) => {
        await page.getByRole('button', { name: 'New credential' }).click();
        await page.getByLabel('Name', { exact: true }).fill(name);
        await page.getByLabel('API key').fill(key);
        await page.getByLabel('Base URL').fill(fake.url);
        await page.getByRole('button', { name: 'Add credential' }).click();
        await page.getByRole('row', { name: new RegExp(name) }).waitFor();
      };
      await add('Fake upstream', right);
      const first = page.getByRole('row', { name: /Fake upstream/ });
      // The first credential of a provider is its default.
      await first.getByText('Default', { exact: true }).waitFor();
      await first.getByText('Not tested').waitFor();

      await page.getByRole('button', { name: 'Test Fake upstream' }).click();
      await first.getByText('Works: 3 models listed').waitFor();

      // A wrong key: the provider's 401 and its error code, never its text or the key.
      await page.getByRole('button', { name: 'Edit Fake upstream' }).click();
      await page.getByLabel('New API key').fill(wrong);
      await page.getByRole('button', { name: 'Save' }).click();
      await first.getByText('…BBBB').waitFor();
      await page.getByRole('button', { name: 'Test Fake upstream' }).click();
      await first.getByText(/^Failed: Model provider openai \(.*\) refused the credentials \(HTTP 401\) \(invalid_api_key\)$/).waitFor();
      expect(await everything(page)).not.toContain(wrong);
      expect((await server.call('GET', '/api/v1/credentials')).body.credentials[0]).toMatchObject({ name: 'Fake upstream', isValid: false });
      await expectAccessible(page, 'credentials (tested)');

      // A second one does not take the default over; Make default moves it.
      await add('Second upstream', right);
      const second = page.getByRole('row', { name: /Second upstream/ });
      await page.getByRole('button', { name: 'Make default Second upstream' }).waitFor();
      expect(await second.getByText('Default', { exact: true }).count()).toBe(0);
      await page.getByRole('button', { name: 'Make default Second upstream' }).click();
      await second.getByText('Default', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Make default Fake upstream' }).waitFor();
      expect(await first.getByText('Default', { exact: true }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Make default Second upstream' }).count()).toBe(0);
      const defaults = (await server.call('GET', '/api/v1/credentials')).body.credentials.filter((c: { default: boolean }) => c.default);
      expect(defaults.map((c: { name: string }) => c.name)).toEqual(['Second upstream']);

      // The base URL is editable: an address the outbound policy refuses is named at the field.
      await page.getByRole('button', { name: 'Edit Second upstream' }).click();
      await page.getByLabel('Base URL').fill('http://192.168.1.20:8000/v1');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect
        .poll(() => page.locator('#credential-baseUrl-error').textContent())
        .toBe('Base URL: Refused to connect to 192.168.1.20: private address; allow it with --allow-host 192.168.1.20:8000');
      await page.getByLabel('Base URL').fill(`${fake.origin}/v1/`);
      await page.getByRole('button', { name: 'Save' }).click();
      await second.getByText(`${fake.origin}/v1/`).waitFor();
      // Emptied: the provider's default address.
      await page.getByRole('button', { name: 'Edit Second upstream' }).click();
      await page.getByLabel('Base URL').fill('');
      await page.getByRole('button', { name: 'Save' }).click();
      await second.getByText("provider's default").waitFor();
      expectCleanConsole(problems);
    } finally {
      await context.close();
      for (const c of (await server.call('GET', '/api/v1/credentials')).body.credentials) await server.call('DELETE', `/api/v1/credentials/${c.id}`);
      await fake.close();
    }
  });
});

describe('console: API keys', () => {
  it('shows a new key once with a copy button (Clipboard API, and the fallback), and revokes a key after confirmation', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      await signIn(page, server);
      await page.getByRole('link', { name: 'API keys' }).click();
      const { userId } = (await server.call('GET', '/api/auth/keys')).body;
      await page.getByText(`Keys of user ${userId}`).waitFor();
      await page.getByRole('row', { name: /this console is signed in with it/ }).waitFor();

      // The service's message for a blank name, at the field.
      await page.getByLabel('Name of a new key').fill('   ');
      await page.getByRole('button', { name: 'Create key' }).click();
      await expect.poll(() => page.locator('#key-name-error').textContent()).toBe('Name is required');

      await page.getByLabel('Name of a new key').fill('CI deploy');
      await page.getByRole('button', { name: 'Create key' }).click();
      const dialog = page.getByRole('dialog', { name: 'New API key: CI deploy' });
      await dialog.getByText('it will not be shown again').waitFor();
      const key = await dialog.getByLabel('API key').inputValue();
      expect(key).toMatch(/^ap_[0-9a-z]{44}$/);
      expect((await server.call('GET', '/api/v1/projects', { key })).status).toBe(200);
      await dialog.getByRole('button', { name: 'Copy' }).click();
      await dialog.getByText('Copied to the clipboard.').waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      await expectAccessible(page, 'new API key');
      await screenshot(page, 'api-key-created');

      // Where the Clipboard API is refused (a plain-http address), the selection is copied instead.
      await page.evaluate(async () => {
        await navigator.clipboard.writeText('something else');
        navigator.clipboard.writeText = () => Promise.reject(new DOMException('refused', 'NotAllowedError'));
      });
      await dialog.getByRole('button', { name: 'Copy' }).click();
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(key);

      // Shown once: gone when the dialog closes, and after a reload; listed by its public start.
      await dialog.getByRole('button', { name: 'Done' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(false);
      expect(await everything(page)).not.toContain(key);
      await page.reload();
      const row = page.getByRole('row', { name: /CI deploy/ });
      await row.getByText(`${key.slice(0, 15)}…`).waitFor();
      expect(await everything(page)).not.toContain(key);
      await expectAccessible(page, 'API keys');
      await screenshot(page, 'api-keys');

      // Revoke: cancel keeps it; confirm revokes it and the service refuses it from then on.
      await page.getByRole('button', { name: 'Revoke CI deploy' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      expect((await server.call('GET', '/api/v1/projects', { key })).status).toBe(200);
      await page.getByRole('button', { name: 'Revoke CI deploy' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
      await expect.poll(() => row.count()).toBe(0);
      expect((await server.call('GET', '/api/v1/projects', { key })).status).toBe(401);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });

  it('pages the keys of a user with many: the newest 20 first, then the rest; a new key shows on the first page', async () => {
    const { key, userId } = await server.platform.createUserWithKey({ name: 'key 0' });
    for (let n = 1; n < 25; n++) await server.platform.createKeyForUser(userId, { name: `key ${n}` });
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server, key);
      await go(page, '#/keys', 'API keys');
      const pager = page.getByRole('navigation', { name: 'API keys pages' });
      await pager.getByText('1–20 of 25').waitFor();
      await page.getByRole('row', { name: /key 24/ }).waitFor();
      expect(await page.getByRole('row', { name: /key 0\b/ }).count()).toBe(0);
      await pager.getByRole('button', { name: 'Next' }).click();
      await pager.getByText('21–25 of 25').waitFor();
      // The oldest, the one this console is signed in with, is on the second page.
      await page.getByRole('row', { name: /key 0.*this console is signed in with it/ }).waitFor();
      expect(await page.getByRole('row', { name: /key 24/ }).count()).toBe(0);
      await expectAccessible(page, 'API keys, second page');
      await page.getByLabel('Name of a new key').fill('newest');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('dialog', { name: 'New API key: newest' }).getByRole('button', { name: 'Done' }).click();
      await pager.getByText('1–20 of 26').waitFor();
      await page.getByRole('row', { name: /newest/ }).waitFor();
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });

  it('signs out cleanly when the key it is signed in with is revoked', async () => {
    const own = (await server.call('POST', '/api/auth/create-key', { body: { name: 'console key' } })).body.key as string;
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server, own);
      await go(page, '#/keys', 'API keys');
      await page.getByRole('row', { name: /console key.*this console is signed in with it/ }).waitFor();
      await page.getByRole('button', { name: 'Revoke console key' }).click();
      await page.getByRole('dialog').getByText('This console is signed in with this key').waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
      await page.getByRole('alert').getByText('You revoked the key this console was signed in with. Sign in with another key.').waitFor();
      await page.getByLabel('API key').waitFor();
      expect(await everything(page)).not.toContain(own);
      expect((await server.call('GET', '/api/auth/keys', { key: own })).status).toBe(401);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });
});

describe('console: local models', () => {
  it('lists the runtime models with size and digest, and deletes one after a confirmation naming its tag', async () => {
    ollama.models = [ollamaTag('llama3.2:3b', 2_019_393_189), ollamaTag('nomic-embed-text:latest', 274_302_450)];
    const digest = `sha256:${ollama.models[0]?.digest}`;
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.getByRole('link', { name: 'Local models' }).click();
      const llama = page.getByRole('row', { name: /llama3\.2:3b/ });
      await llama.getByText('2.0 GB').waitFor();
      await page
        .getByRole('row', { name: /nomic-embed-text:latest/ })
        .getByText('274 MB')
        .waitFor();
      const code = llama.locator('code');
      expect(await code.textContent()).toBe(digest.slice(0, 'sha256:'.length + 12));
      expect(await code.getAttribute('title')).toBe(digest);
      await expectAccessible(page, 'local models');
      await screenshot(page, 'local-models');

      await page.getByRole('button', { name: 'Delete llama3.2:3b' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete llama3.2:3b?' });
      await dialog.getByText('Delete the model llama3.2:3b').waitFor();
      await expectAccessible(page, 'delete local model');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(ollama.models).toHaveLength(2);
      await page.getByRole('button', { name: 'Delete llama3.2:3b' }).click();
      await dialog.getByRole('button', { name: 'Delete llama3.2:3b' }).click();
      await page.getByRole('status').getByText('Model llama3.2:3b deleted').waitFor();
      await expect.poll(() => llama.count()).toBe(0);
      expect(ollama.models.map((m) => m.name)).toEqual(['nomic-embed-text:latest']);
      expect(ollama.requests.filter((r) => r.method === 'DELETE').map((r) => JSON.parse(r.body).model)).toEqual(['llama3.2:3b']);

      // A failed deletion shows the service's error; the model stays listed.
      ollama.deleteStatus = 500;
      await page.getByRole('button', { name: 'Delete nomic-embed-text:latest' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete nomic-embed-text:latest' }).click();
      await expect.poll(() => page.locator('p.error').textContent()).toBe('Failed to delete model');
      await page.getByRole('row', { name: /nomic-embed-text:latest/ }).waitFor();
      expectCleanConsole(problems);
    } finally {
      ollama.deleteStatus = undefined;
      await context.close();
    }
  });

  it('says what to do when no runtime runs at the address, refuses a private one at the field, and explains an empty runtime', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await go(page, '#/local-models', 'Local models');
      await page.getByLabel('Ollama runtime address').fill('http://127.0.0.1:9');
      await page.getByRole('button', { name: 'Show models' }).click();
      const alert = page.getByRole('alert');
      await alert.getByText('Local model runtime is not running at http://127.0.0.1:9').waitFor();
      await alert.getByText(/Start Ollama there \(ollama serve\)/).waitFor();
      await expectAccessible(page, 'local models (not running)');
      await screenshot(page, 'local-models-not-running');

      await page.getByLabel('Ollama runtime address').fill('http://10.0.0.5:11434');
      await page.getByRole('button', { name: 'Show models' }).click();
      await expect.poll(() => page.locator('#runtime-address-error').textContent()).toMatch(/^Refused to connect to 10\.0\.0\.5/);

      ollama.models = [];
      await page.getByLabel('Ollama runtime address').fill(ollama.url);
      await page.getByRole('button', { name: 'Show models' }).click();
      await page.getByText(`No models installed at ${ollama.url}`).waitFor();
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  });
});
