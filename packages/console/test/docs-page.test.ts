import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';
import { expectCleanConsole, launchBrowser, openPage } from './browser.js';

// /docs (swagger-ui) in real Chromium: the API key given to "Authorize" is used for calls and is
// kept nowhere the origin's storage could give it back; the page runs under the console's CSP
// without a violation; another site cannot frame it.

let browser: Browser;
let server: TestServer;
/** A page of another origin (another port) that frames /docs. */
let framer: Server;
let framerUrl: string;

beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startTestServer()]);
  framer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>framer</title><iframe id="docs" src="${server.url}/docs" width="800" height="600"></iframe>`);
  });
  await new Promise<void>((ok) => framer.listen(0, '127.0.0.1', ok));
  framerUrl = `http://127.0.0.1:${(framer.address() as AddressInfo).port}/`;
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((ok) => framer?.close(ok));
});

/** Both storages of the page's origin, every key and value. */
const storages = (page: Page) => page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage } }));

/** Opens /docs and waits for swagger-ui to have rendered the document (not its spinner). */
async function openDocs(page: Page): Promise<void> {
  await page.goto(`${server.url}/docs`);
  await page.locator('.swagger-ui .auth-wrapper button.authorize').waitFor();
  await page.locator('.swagger-ui .opblock').first().waitFor();
}

describe('/docs', () => {
  it("uses the key given to Authorize for calls, keeps it in no storage (nor an earlier version's), and forgets it on reload", async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      // What an earlier version of the page kept in localStorage (persistAuthorization) is removed.
      await page.goto(`${server.url}/health`);
      await page.evaluate((key) => localStorage.setItem('authorized', JSON.stringify({ bearerAuth: { name: 'bearerAuth', value: key } })), server.keyA);
      await openDocs(page);
      expect(await storages(page)).not.toContain(server.keyA);

      await page.locator('.swagger-ui .auth-wrapper button.authorize').click();
      const dialog = page.locator('.swagger-ui .modal-ux');
      await dialog.locator('input').first().fill(server.keyA);
      await dialog.locator('button.authorize').click();
      await dialog.locator('button', { hasText: 'Logout' }).waitFor();
      await dialog.locator('button.btn-done').click();

      // A call made from the page carries the key: it was taken.
      const operation = page.locator('#operations-default-get_api_auth_keys, .opblock-get:has([data-path="/api/auth/keys"])').first();
      await operation.locator('.opblock-summary').click();
      await operation.getByRole('button', { name: 'Try it out' }).click();
      const [request] = await Promise.all([page.waitForRequest((r) => r.url().startsWith(`${server.url}/api/auth/keys`)), operation.getByRole('button', { name: 'Execute' }).click()]);
      expect(request.headers().authorization).toBe(`Bearer ${server.keyA}`);
      await operation.locator('.responses-wrapper .live-responses-table .response-col_status').first().waitFor();

      const stored = await storages(page);
      expect(stored).not.toContain(server.keyA);
      // Not even part of it (its secret characters after the prefix).
      expect(stored).not.toContain(server.keyA.slice(-16));
      expect(JSON.parse(stored).local).not.toHaveProperty('authorized');

      // A reload starts signed out: nothing brought the key back.
      await page.reload();
      await page.locator('.swagger-ui .auth-wrapper button.authorize').waitFor();
      expect(await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').count()).toBe(0);
      expect(await storages(page)).not.toContain(server.keyA);
      // Rendered under the console's CSP with no violation and no error.
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('is refused in a frame of another site (frame-ancestors)', async () => {
    const { context, page } = await openPage(browser);
    try {
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/frame-ancestors/.test(message.text())) refused.push(message.text());
      });
      await page.goto(framerUrl);
      await expect.poll(() => refused.length, { timeout: 10_000 }).toBeGreaterThan(0);
      // The frame never shows swagger-ui: Chromium put its error page in it.
      const frame = page.frames().find((f) => f !== page.mainFrame());
      expect(frame).toBeDefined();
      expect(await frame?.locator('#swagger-ui').count()).toBe(0);
      expect(frame?.url()).not.toBe(`${server.url}/docs`);
    } finally {
      await context.close();
    }
  }, 60_000);
});
