import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, DESKTOP, expectAccessible, expectCleanConsole, launchBrowser, openPage, PHONE, screenshot, signIn, startConsoleServer } from './browser.js';
import { actionsOffScreen, expectFits, expectRowsAligned } from './layout.js';

// The console's layout, measured in Chromium at a laptop's width (1280 px) and a phone's (390 px):
// the cells of a table's rows line up, nothing is wider than the screen (a 100-character name
// included, also in a dialog), a table's actions are on the screen of a phone, the MCP URL field
// shows a whole URL; and the frame: favicon, loading states, the link to the API reference.

let browser: Browser;
let server: ConsoleServer;
let projectId: string;
/** A name of 100 characters with no place to break a line (underscores are none): the worst case for a layout. */
const LONG_NAME = `Customer_support_knowledge_base_for_the_northern_region_${'x'.repeat(44)}`;
const LONG_CHAT = `Why-does-the-refund-of-order-${'7'.repeat(60)}-take-so-long-and-what-can-be-done`;

beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startConsoleServer()]);
  expect(LONG_NAME).toHaveLength(100);
  projectId = (await server.call('POST', '/api/projects/create', { body: { name: LONG_NAME, description: `Answers ${'questions-'.repeat(12)}`, model: 'gpt-4o-mini', provider: 'openai' } })).body
    .project.id;
  await server.call('POST', '/api/projects/create', { body: { name: 'Support', icon: '🛟', color: '#2563eb', model: 'gpt-4o-mini', provider: 'openai' } });
  const added = await server.call('POST', '/api/knowledge/documents', {
    body: { projectId, fileName: `${'refund-policy-'.repeat(6)}.md`, fileType: 'md', sourceType: 'upload', content: '# Refunds\n\nCustomers can ask for a refund within 30 days.' },
  });
  expect(await server.indexed(added.body.documentId)).toMatchObject({ status: 'completed' });
  const tool = await server.call('POST', '/api/tools/create', {
    body: { projectId, name: 'weather', description: 'Current weather of a city', language: 'javascript', code: 'function main(args) { return args; }' },
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  await server.call('POST', '/api/chats', { body: { projectId, name: LONG_CHAT } });
  const credential = await server.call('POST', '/api/v1/credentials', { body: { name: 'Team OpenAI', provider: 'openai', apiKey: 'sk-layout-test-0000' } });
  expect(credential.status, JSON.stringify(credential.body)).toBe(201);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const project = (tab: string) => `${server.url}/console/#/projects/${projectId}/${tab}`;

/** Every screen with a list table, each opened and waited for until its table shows. */
const TABLE_SCREENS: readonly { name: string; open: (page: Page) => Promise<void> }[] = [
  { name: 'projects', open: (page) => page.goto(`${server.url}/console/#/projects`).then(() => undefined) },
  { name: 'documents', open: (page) => page.goto(project('knowledge')).then(() => undefined) },
  { name: 'tools', open: (page) => page.goto(project('tools')).then(() => undefined) },
  { name: 'credentials', open: (page) => page.goto(`${server.url}/console/#/credentials`).then(() => undefined) },
  { name: 'API keys', open: (page) => page.goto(`${server.url}/console/#/keys`).then(() => undefined) },
];

async function openTable(page: Page, screen: (typeof TABLE_SCREENS)[number]): Promise<void> {
  await screen.open(page);
  await page.locator('table.list tbody tr').first().waitFor();
}

describe('console layout: tables', () => {
  it('lines up the cells of every row at 1280 px: one top, one bottom and one first baseline per row, on every table', async () => {
    const { context, page, problems } = await openPage(browser, DESKTOP);
    try {
      await signIn(page, server);
      for (const screen of TABLE_SCREENS) {
        await openTable(page, screen);
        await expectRowsAligned(page, screen.name);
        await expectFits(page, screen.name);
      }
      await page.goto(`${server.url}/console/#/projects`);
      await page.locator('table.list tbody tr').nth(1).waitFor();
      await screenshot(page, 'table-desktop');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows each row as a card at 390 px with its actions on the screen, and they work there', async () => {
    const { context, page, problems } = await openPage(browser, PHONE);
    try {
      await signIn(page, server);
      for (const screen of TABLE_SCREENS) {
        await openTable(page, screen);
        await expectFits(page, `${screen.name} (phone)`);
        expect(await actionsOffScreen(page), `${screen.name}: actions off the screen`).toEqual([]);
        // Each cell after the first says which column it is.
        const labels = await page
          .locator('table.list tbody tr')
          .first()
          .locator('td')
          .evaluateAll((cells) => cells.map((c) => (c as HTMLElement).dataset.label));
        expect(
          labels.slice(0, -1).every((l) => typeof l === 'string' && l.length > 0),
          `${screen.name}: ${JSON.stringify(labels)}`,
        ).toBe(true);
      }
      await page.goto(`${server.url}/console/#/projects`);
      const row = page.getByRole('row', { name: /Support/ });
      await row.waitFor();
      // The card shows the column's name before a value ("Model: openai: gpt-4o-mini").
      expect(
        await row
          .locator('td')
          .nth(1)
          .evaluate((td) => getComputedStyle(td, '::before').content),
      ).toBe('"Model: "');
      await expectAccessible(page, 'projects (phone)');
      await screenshot(page, 'table-phone');
      // An action on a phone opens what it says.
      await page.getByRole('button', { name: 'Delete Support' }).click();
      await page.getByRole('dialog', { name: 'Delete project?' }).waitFor();
      await expectFits(page, 'delete dialog (phone)');
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);
});

describe.each([
  ['1280', DESKTOP],
  ['390', PHONE],
])('console layout at %s px', (width, viewport) => {
  it('keeps a 100-character name inside the page and the dialogs: wrapped in headings and tables, cut with an ellipsis in the chat list', async () => {
    const { context, page, problems } = await openPage(browser, viewport);
    try {
      await signIn(page, server);
      await page.getByRole('link', { name: LONG_NAME }).waitFor();
      await expectFits(page, 'projects');
      await page.getByRole('button', { name: `Delete ${LONG_NAME}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete project?' });
      await dialog.getByText(LONG_NAME).waitFor();
      await expectFits(page, 'delete dialog');
      await screenshot(page, `long-name-dialog-${width}`);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: `Edit ${LONG_NAME}` }).click();
      await page.getByLabel('Name', { exact: true }).waitFor();
      await expectFits(page, 'project form');

      await page.goto(project('knowledge'));
      await page.getByRole('heading', { name: LONG_NAME, level: 1 }).waitFor();
      await page.locator('table.list tbody tr').first().waitFor();
      await expectFits(page, 'project page');
      await page.goto(project('chat'));
      const chat = page.getByRole('navigation', { name: 'Chats' }).getByRole('button', { name: LONG_CHAT });
      await chat.waitFor();
      await expectFits(page, 'chat list');
      // One line, cut: the whole name is its title.
      expect(await chat.evaluate((b) => [getComputedStyle(b).textOverflow, b.scrollWidth > b.clientWidth, b.getAttribute('title')])).toEqual(['ellipsis', true, LONG_CHAT]);
      await chat.click();
      await page.getByRole('heading', { name: LONG_CHAT, level: 2 }).waitFor();
      await expectFits(page, 'open chat');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows a whole URL in the MCP URL field', async () => {
    const { context, page, problems } = await openPage(browser, viewport);
    try {
      await signIn(page, server);
      await page.goto(project('mcp'));
      await page.getByRole('button', { name: 'Add server' }).first().click();
      const url = page.getByLabel('URL', { exact: true });
      // A URL as MCP servers have them: shown whole at 1280 px; at 390 px the field takes the card's width.
      const address = 'https://mcp.example.com/servers/knowledge/mcp';
      await url.fill(address);
      const box = await url.evaluate((input) => {
        const r = input.getBoundingClientRect();
        const card = (input.closest('.card') as HTMLElement).getBoundingClientRect();
        return { scroll: input.scrollWidth, client: input.clientWidth, width: r.width, cardWidth: card.width };
      });
      if (viewport === DESKTOP) expect(box.scroll, JSON.stringify(box)).toBeLessThanOrEqual(box.client);
      // The field takes the card's width less the transport's (or all of it on a phone), not a narrow column.
      expect(box.width, JSON.stringify(box)).toBeGreaterThan(box.cardWidth * (viewport === PHONE ? 0.85 : 0.6));
      await expectFits(page, 'add MCP server');
      await screenshot(page, `mcp-url-${width}`);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('has the link to the API reference in its header, on the screen', async () => {
    const { context, page, problems } = await openPage(browser, viewport);
    try {
      await signIn(page, server);
      const link = page.getByRole('link', { name: 'API reference (opens in a new tab)' });
      expect(await link.getAttribute('href')).toBe('/docs');
      const box = await link.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= viewport.width).toBe(true);
      await expectFits(page, 'header');
      const [docs] = await Promise.all([context.waitForEvent('page'), link.click()]);
      await docs.waitForLoadState();
      expect(docs.url()).toBe(`${server.url}/docs`);
      expect(await docs.title()).toBe('Agent Platform API');
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 60_000);
});

describe('console frame', () => {
  it('has a favicon, served by the server (no key, nothing from elsewhere)', async () => {
    const { context, page } = await openPage(browser);
    try {
      await page.goto(`${server.url}/console/`);
      const href = await page.locator('link[rel="icon"]').getAttribute('href');
      expect(href).toMatch(/^\/console\/assets\/favicon-[\w-]+\.svg$/);
      const res = await page.request.get(`${server.url}${href}`);
      expect(res.status()).toBe(200);
      expect(res.headers()['content-type']).toBe('image/svg+xml');
      // It is a picture the browser draws.
      const size = await page.evaluate(async (src) => {
        const img = new Image();
        img.src = src;
        await img.decode();
        return img.naturalWidth;
      }, href as string);
      expect(size).toBeGreaterThan(0);
    } finally {
      await context.close();
    }
  });

  it('says it is loading: the page until its script runs, a list until its first page comes', async () => {
    const { context, page, problems } = await openPage(browser);
    try {
      // The console's script held back: the page itself says what is coming.
      let releaseScript = () => {};
      const scriptHeld = new Promise<void>((resolve) => (releaseScript = resolve));
      await page.route(/\/console\/assets\/index-[\w-]+\.js$/, async (route) => {
        await scriptHeld;
        await route.continue();
      });
      await page.goto(`${server.url}/console/`, { waitUntil: 'commit' });
      await page.getByRole('status').getByText('Loading the console…').waitFor();
      releaseScript();
      await page.getByLabel('API key').waitFor();
      expect(await page.getByText('Loading the console…').count()).toBe(0);
      await page.unroute(/\/console\/assets\/index-[\w-]+\.js$/);

      // Signed in: the projects list says it is loading until its first page arrives.
      await signIn(page, server);
      let releaseList = () => {};
      const listHeld = new Promise<void>((resolve) => (releaseList = resolve));
      await page.route(/\/api\/v1\/projects\?/, async (route) => {
        await listHeld;
        await route.continue();
      });
      await page.reload();
      await page.getByRole('status').getByText('Loading projects…').waitFor();
      await expectAccessible(page, 'loading projects');
      await screenshot(page, 'loading');
      releaseList();
      await page.getByRole('link', { name: 'Support', exact: true }).waitFor();
      expect(await page.getByText('Loading projects…').count()).toBe(0);
      expectCleanConsole(problems);
    } finally {
      await context.close();
    }
  }, 60_000);
});
