import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { type FakeUpstream, startUpstream } from '../../server/test/fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from '../../server/test/helpers.js';

// The console's end-to-end tests: Debian's Chromium (installed by .ci/run when missing; the
// browsers Playwright downloads cannot be fetched here) driven by playwright-core, against a
// real server on loopback whose model provider is a fake OpenAI-compatible upstream.

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const IMAGES = join(ROOT, 'docs', 'images');

/**
 * One headless Chromium per test file. `launch` gives it a fresh profile (user-data dir) of its
 * own in a temp folder, and each test opens its own context (cookies, storage) and pages.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

export interface ConsoleServer extends TestServer {
  readonly upstream: FakeUpstream;
}

/**
 * A real server (built console included) whose `openai` provider is a loopback fake; `env` adds
 * to the server's environment (e.g. `OLLAMA_HOST` of a fake Ollama). Its users may name
 * 127.0.0.1 (`ALLOW_LOOPBACK`), where the tests' fakes listen.
 */
export async function startConsoleServer(env: Record<string, string> = {}): Promise<ConsoleServer> {
  const upstream = await startUpstream();
  // Users of these tests add loopback fakes (credentials, MCP servers, runtime addresses): allowed as --allow-host 127.0.0.1 does.
  const server = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream', ...env } });
  if (!server.consoleUrl) throw new Error('The console is not built: run pnpm run build first');
  const stopServer = server.stop;
  return Object.assign(server, {
    upstream,
    async stop() {
      await stopServer();
      await upstream.close();
    },
  });
}

/** The widths the console is checked at: a laptop and a phone. */
export const DESKTOP = { width: 1280, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/**
 * A page of a new context that fails the test on any Content-Security-Policy violation or
 * uncaught error of the console (recorded, checked by `expectCleanConsole`). 1280 px wide
 * unless `viewport` says otherwise (`PHONE`).
 */
export async function openPage(browser: Browser, viewport: { width: number; height: number } = DESKTOP): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  return { context, page, problems };
}

/** Opens the server's root (redirected to the console) and signs in with `key`. */
export async function signIn(page: Page, server: TestServer, key = server.keyA): Promise<void> {
  await page.goto(`${server.url}/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}

let axeSource: string | undefined;

/**
 * Runs axe-core in the page and expects no serious or critical violation. axe is evaluated
 * through the DevTools protocol, not added as a <script>: the page's CSP (rightly) refuses
 * inline scripts.
 */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document);
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `${screen}: ${JSON.stringify(serious, null, 2)}`).toEqual([]);
}

/**
 * A screenshot of a main screen. Always taken (it proves the screen renders); written to
 * docs/images/ (which the docs show) when UPDATE_SCREENSHOTS=1, so an ordinary run leaves the
 * committed images alone.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot({ fullPage: true });
  expect(png.length).toBeGreaterThan(1000);
  if (process.env.UPDATE_SCREENSHOTS === '1') {
    const file = join(IMAGES, `console-${name}.png`);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, png);
  }
}

/** Expects the page saw no CSP violation and threw nothing. */
export function expectCleanConsole(problems: readonly string[]): void {
  expect(problems).toEqual([]);
}
