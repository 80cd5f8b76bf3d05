import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropicServer, startFakeAnthropicServer } from '../../adapters-models/test/fakes/anthropic-server.js';
import { CREDENTIAL_FIELDS, CREDENTIAL_PROVIDERS, MODEL_PROVIDERS, PROVIDER_OPTIONS } from '../src/api/enums.js';
import { labelOf } from '../src/components/error-text.js';
import { type ConsoleServer, expectAccessible, expectCleanConsole, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';

// The credential form of each provider, built from the API's contract (CREDENTIAL_FIELDS,
// generated), a project of a provider other than openai whose model picker is fed by its
// credential's upstream (a loopback fake of Anthropic's API), and a project's provider options
// checked against the provider's schema from the contract (PROVIDER_OPTIONS, generated).

let browser: Browser;
let server: ConsoleServer;
let anthropic: FakeAnthropicServer;
beforeAll(async () => {
  anthropic = await startFakeAnthropicServer({ apiKey: 'sk-ant-console-key-2468', models: ['claude-test', 'claude-test-haiku'] });
  // The providers' default addresses on loopback (the fake, and a port nothing listens on), so a
  // form that lists a provider's models without a credential of it never reaches the real one.
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer({ ANTHROPIC_BASE_URL: anthropic.url, GOOGLE_GENERATIVE_AI_BASE_URL: 'http://127.0.0.1:9/v1beta' })]);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await anthropic?.close();
});

type Stored = { id: string; name: string; provider: string; fields: Record<string, unknown>; secretsLast4: Record<string, string>; apiKeyLast4: string };
const stored = async (name: string) => ((await server.call('GET', '/api/v1/credentials')).body.credentials as Stored[]).find((c) => c.name === name) as Stored;

async function openCredentials(page: Page): Promise<void> {
  await signIn(page, server);
  await page.getByRole('link', { name: 'Credentials' }).click();
  await page.getByRole('heading', { name: 'Credentials', level: 1 }).waitFor();
}

/** The labels of the form's fields between the name and the base URL: the provider's own. */
const ownLabels = (page: Page) => page.locator('form .grid .field label').evaluateAll((labels) => labels.map((l) => l.textContent ?? '').filter((t) => !['Provider', 'Name', 'Base URL'].includes(t)));

/** Every secret typed, nowhere in the page: its HTML, every field's value, both storages. */
async function expectNoSecrets(page: Page, secrets: readonly string[]): Promise<void> {
  const seen = await page.evaluate(() => ({
    html: document.documentElement.outerHTML,
    values: Array.from(document.querySelectorAll('input, textarea'), (i) => (i as HTMLInputElement).value).join('\n'),
    storage: JSON.stringify(sessionStorage) + JSON.stringify(localStorage),
  }));
  for (const secret of secrets) for (const [where, text] of Object.entries(seen)) expect(text.includes(secret), `${secret} in ${where}`).toBe(false);
}

describe('console: providers', () => {
  it("offers each provider's own credential fields, from the contract; Azure's and Bedrock's are added, shown back without their secrets and changed", async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      await openCredentials(page);
      await page.getByRole('button', { name: 'New credential' }).click();
      // Every credential provider of the contract, each with its fields (secrets as password fields).
      expect(await page.locator('#credential-provider option').allTextContents()).toEqual([...CREDENTIAL_PROVIDERS]);
      for (const provider of CREDENTIAL_PROVIDERS) {
        await page.getByLabel('Provider', { exact: true }).selectOption(provider);
        expect(await ownLabels(page), provider).toEqual(CREDENTIAL_FIELDS[provider].map((f) => labelOf(f.name)));
        for (const f of CREDENTIAL_FIELDS[provider])
          expect(await page.locator(`#credential-${f.name}`).getAttribute('type'), `${provider} ${f.name}`).toBe(f.secret ? 'password' : f.kind === 'map' ? null : f.kind);
      }

      // Azure: key, endpoint, API version and deployments (name = value lines, checked before sending).
      await page.getByLabel('Provider', { exact: true }).selectOption('azure');
      await page.getByLabel('Name', { exact: true }).fill('Azure prod');
      await page.getByLabel('API key').fill('azure-secret-key-9876');
      await page.getByLabel('Endpoint').fill('http://127.0.0.1:9');
      await page.getByLabel('API version').fill('2024-10-21');
      await page.getByLabel('Deployments').fill('gpt-4o = prod-gpt4o\nnot a pair');
      await page.getByRole('button', { name: 'Add credential' }).click();
      await expect.poll(() => page.locator('#credential-deployments-error').textContent()).toBe('Line 2 is not "name = value"');
      expect(await stored('Azure prod')).toBeUndefined();
      await page.getByLabel('Deployments').fill('gpt-4o = prod-gpt4o\ngpt-4o-mini = small');
      // The service's own check of a field lands at it.
      await page.getByLabel('API version').fill('last week');
      await page.getByRole('button', { name: 'Add credential' }).click();
      await expect.poll(() => page.locator('#credential-apiVersion-error').textContent()).toMatch(/^API version must be an Azure OpenAI api-version/);
      await page.getByLabel('API version').fill('2024-10-21');
      await page.getByRole('button', { name: 'Add credential' }).click();
      await page.getByRole('button', { name: 'Edit Azure prod' }).waitFor();
      expect(await stored('Azure prod')).toMatchObject({
        provider: 'azure',
        fields: { endpoint: 'http://127.0.0.1:9', apiVersion: '2024-10-21', deployments: { 'gpt-4o': 'prod-gpt4o', 'gpt-4o-mini': 'small' } },
        secretsLast4: { apiKey: '9876' },
      });

      // Bedrock: region, access key id, secret access key and session token.
      await page.getByRole('button', { name: 'New credential' }).click();
      await page.getByLabel('Provider', { exact: true }).selectOption('bedrock');
      await page.getByLabel('Name', { exact: true }).fill('Bedrock east');
      await page.getByLabel('Region').fill('us-east-1');
      await page.getByLabel('Access key ID').fill('AKIAABCDEFGHIJKLMNOP');
      await page.getByLabel('Secret access key').fill('bedrock-secret-5555');
      await page.getByLabel('Session token').fill('sts-session-token-7777');
      await expectAccessible(page, 'credential form (bedrock)');
      await screenshot(page, 'credential-bedrock');
      await page.getByRole('button', { name: 'Add credential' }).click();
      await page.getByRole('button', { name: 'Edit Bedrock east' }).waitFor();
      const bedrock = await stored('Bedrock east');
      expect(bedrock).toMatchObject({ provider: 'bedrock', fields: { region: 'us-east-1', accessKeyId: 'AKIAABCDEFGHIJKLMNOP' }, secretsLast4: { secretAccessKey: '5555', sessionToken: '7777' } });
      const secrets = ['azure-secret-key-9876', 'bedrock-secret-5555', 'sts-session-token-7777'];
      await expectNoSecrets(page, secrets);

      // Edited: the shown fields come back, the secrets do not (their last four are said); only what changed is sent.
      await page.getByRole('button', { name: 'Edit Bedrock east' }).click();
      expect(await page.getByLabel('Region').inputValue()).toBe('us-east-1');
      expect(await page.getByLabel('Access key ID').inputValue()).toBe('AKIAABCDEFGHIJKLMNOP');
      expect(await page.getByLabel('New secret access key').inputValue()).toBe('');
      await page.getByText('Empty keeps the current one (ending in 5555).').waitFor();
      await page.getByText('Empty keeps the current one (ending in 7777).').waitFor();
      await expectNoSecrets(page, secrets);
      const patched = page.waitForRequest((r) => r.method() === 'PATCH' && r.url().includes(`/api/v1/credentials/${bedrock.id}`));
      await page.getByLabel('Region').fill('eu-west-1');
      await page.getByRole('button', { name: 'Save' }).click();
      expect((await patched).postDataJSON()).toEqual({ data: { name: 'Bedrock east', proxy: false, region: 'eu-west-1' } });
      await expect.poll(async () => (await stored('Bedrock east')).fields.region).toBe('eu-west-1');
      expect((await stored('Bedrock east')).secretsLast4).toEqual({ secretAccessKey: '5555', sessionToken: '7777' });

      await page.getByRole('button', { name: 'Edit Azure prod' }).click();
      expect(await page.getByLabel('Deployments').inputValue()).toBe('gpt-4o = prod-gpt4o\ngpt-4o-mini = small');
      await page.getByLabel('Deployments').fill('gpt-4o = prod-gpt4o');
      await page.getByLabel('New API key').fill('azure-rotated-key-1357');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(async () => (await stored('Azure prod')).fields.deployments).toEqual({ 'gpt-4o': 'prod-gpt4o' });
      expect((await stored('Azure prod')).secretsLast4).toEqual({ apiKey: '1357' });
      await expectNoSecrets(page, [...secrets, 'azure-rotated-key-1357']);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("creates an Anthropic project: the provider picker from the contract, the models its credential's upstream lists, free text when a listing fails", async () => {
    await server.call('POST', '/api/v1/credentials', { body: { name: 'Team Claude', provider: 'anthropic', apiKey: 'sk-ant-console-key-2468', baseUrl: anthropic.url } });
    const { context, page, problems } = await openPage(browser);
    try {
      await signIn(page, server);
      await page.getByRole('button', { name: 'New project' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Claude desk');
      expect(await page.locator('#project-provider option').allTextContents()).toEqual([...MODEL_PROVIDERS]);
      const options = () => page.locator('#project-model-options option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
      await expect.poll(options).toEqual(['gpt-test', 'gpt-test-mini']);
      // Another provider: the openai model goes; its default credential's upstream lists its models.
      await page.getByLabel('Provider', { exact: true }).selectOption('anthropic');
      expect(await page.getByLabel('Model', { exact: true }).inputValue()).toBe('');
      expect(await page.locator('#project-credentialId option').allTextContents()).toEqual(['Default (Team Claude)', 'Team Claude (…2468)']);
      await expect.poll(options, { timeout: 10_000 }).toEqual(['claude-test', 'claude-test-haiku']);
      await page.getByText(`2 models offered by ${anthropic.url}`).waitFor();
      // Bedrock without a credential: no list, said why; the name is typed.
      await page.getByLabel('Provider', { exact: true }).selectOption('bedrock');
      await page.getByText(/^Could not list the provider's models: .+\. Type the model name\.$/).waitFor();
      await page.getByLabel('Provider', { exact: true }).selectOption('anthropic');
      await expect.poll(options, { timeout: 10_000 }).toEqual(['claude-test', 'claude-test-haiku']);
      await page.getByLabel('Model', { exact: true }).fill('claude-test-haiku');
      await expectAccessible(page, 'project form (anthropic)');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('link', { name: 'Claude desk' }).waitFor();
      const created = (await server.call('GET', '/api/v1/projects?searchWord=Claude')).body.projects[0];
      expect(created).toMatchObject({ provider: 'anthropic', model: 'claude-test-haiku', credentialId: null });
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("edits a project's provider options as JSON: the provider's example offered, checked against its schema before sending, the service's refusal in its words, the saved value shown after a reload", async () => {
    const { context, page, problems } = await openPage(browser);
    const field = page.getByLabel('Provider options');
    const error = page.locator('#project-providerOptions-error');
    const project = async () => ((await server.call('GET', '/api/v1/projects?searchWord=Thinking')).body.projects as { providerOptions: unknown; provider: string }[])[0];
    try {
      await signIn(page, server);
      await page.getByRole('button', { name: 'New project' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Thinking desk');
      await page.getByLabel('Provider', { exact: true }).selectOption('anthropic');
      await page.getByLabel('Model', { exact: true }).fill('claude-test');
      // What the provider takes and its example, from the contract.
      const example = PROVIDER_OPTIONS.anthropic.examples[0];
      await page.getByText(`JSON: the options of anthropic (thinking, cacheControl, sendReasoning), checked before saving. Empty: none. Example: ${JSON.stringify(example)}`).waitFor();
      await page.getByRole('button', { name: 'Use the example' }).click();
      expect(JSON.parse(await field.inputValue())).toEqual(example);
      await expectAccessible(page, 'project form (provider options)');

      // Refused in the page, at the field (which gets the focus), before anything is sent.
      const refused = async (text: string, message: string | RegExp) => {
        await field.fill(text);
        await page.getByRole('button', { name: 'Create project' }).click();
        await expect.poll(() => error.textContent()).toMatch(message);
        expect(await field.evaluate((el) => el === document.activeElement)).toBe(true);
        expect(await field.getAttribute('aria-invalid')).toBe('true');
        expect(await project()).toBeUndefined();
      };
      await refused('{ "thinking": ', /^Provider options are not valid JSON: /);
      await refused('{ "thinking": { "type": "enabled", "budgetTokens": 100 } }', 'providerOptions.thinking.budgetTokens: at least 1024');
      await refused('{ "thinking": { "type": "on" } }', 'providerOptions.thinking.type: must be one of "enabled", "disabled"');
      await refused(
        '{ "thinkng": true, "sendReasoning": "yes" }',
        'providerOptions: "thinkng" is not an option here (it takes thinking, cacheControl, sendReasoning); providerOptions.sendReasoning: must be a boolean, not string',
      );
      await screenshot(page, 'project-provider-options');

      // Past the page's checks, the service's refusal in its words (here its body limit).
      await page.getByLabel('Provider', { exact: true }).selectOption('bedrock');
      await page.getByLabel('Model', { exact: true }).fill('anthropic.claude-test');
      await field.fill(JSON.stringify({ additionalModelRequestFields: { padding: 'x'.repeat(1024 * 1024) } }));
      await page.getByRole('button', { name: 'Create project' }).click();
      await expect.poll(() => page.locator('form .error[role=alert]').last().textContent()).toMatch(/1048576 bytes/);
      expect(await project()).toBeUndefined();

      // Saved, and shown back after a reload.
      await page.getByLabel('Provider', { exact: true }).selectOption('anthropic');
      await page.getByLabel('Model', { exact: true }).fill('claude-test');
      const options = { thinking: { type: 'enabled', budgetTokens: 2048 }, cacheControl: { type: 'ephemeral', ttl: '1h' } };
      await field.fill(JSON.stringify(options));
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('link', { name: 'Thinking desk' }).waitFor();
      expect(await project()).toMatchObject({ provider: 'anthropic', providerOptions: options });
      await page.reload();
      await page.getByRole('button', { name: 'Edit Thinking desk' }).click();
      expect(await field.inputValue()).toBe(JSON.stringify(options, null, 2));

      // Another provider: its own keys; the kept options are refused by name until changed; emptied, none.
      await page.getByLabel('Provider', { exact: true }).selectOption('google');
      await page.getByText(/^JSON: the options of google \(safetySettings, thinkingConfig\)/).waitFor();
      await page.getByLabel('Model', { exact: true }).fill('gemini-test');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect
        .poll(() => error.textContent())
        .toBe(
          'providerOptions: "thinking" is not an option here (it takes safetySettings, thinkingConfig); providerOptions: "cacheControl" is not an option here (it takes safetySettings, thinkingConfig)',
        );
      await field.fill('');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(async () => (await project())?.provider).toBe('google');
      expect((await project())?.providerOptions).toBeNull();
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});
