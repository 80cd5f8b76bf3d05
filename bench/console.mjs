// pnpm bench:console: the web console's weight and speed, in Debian's Chromium against a local
// server (the built packages). Figures and how they were taken: docs/BENCHMARKS.md, "console".
//
// 1. JavaScript (and CSS) of the first load: the files index.html names, raw and gzipped
//    (level 9), and what Chromium reports it received (encodedBodySize); then the chunks loaded
//    only when a screen needs them (the Tools and MCP tabs, the code editor and its languages).
// 2. First screen interactive: navigation start until the sign-in form's key field is in the
//    page (the app has loaded, run and rendered it), timed inside the page by a mutation
//    observer (so Playwright's own round trips are not counted), in a fresh context each round.
// 3. Signed in: from the click on "Sign in" until the projects list shows (the key is checked
//    against the API, then the list is fetched and rendered).
// 4. The documents table of a project with 10,000 documents (BENCH_CONSOLE_DOCUMENTS): the
//    knowledge tab opened until its first page shows, Next, and the status filter.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startServer } from '@agent-platform/server';
import pino from 'pino';

const ROUNDS = Number(process.env.BENCH_CONSOLE_ROUNDS ?? 10);
const require = createRequire(new URL('../packages/console/package.json', import.meta.url));
const { chromium } = require('playwright-core');
const dist = new URL('../packages/console/dist/', import.meta.url);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

async function sizes(files) {
  const rows = [];
  for (const file of files) {
    const body = await readFile(new URL(file, dist));
    rows.push({ file, raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
  }
  return rows;
}

async function weight() {
  const page = await readFile(new URL('index.html', dist), 'utf8');
  return sizes([...page.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+)"/g)].map((m) => m[1]));
}

/** The chunks index.html does not name: loaded when a screen needs them (tools, MCP, the code editor). */
async function lazyChunks(firstLoad) {
  const named = new Set(firstLoad.map((r) => r.file));
  const all = (await readdir(new URL('assets/', dist))).filter((f) => f.endsWith('.js')).map((f) => `assets/${f}`);
  return sizes(all.filter((f) => !named.has(f)).sort());
}

const dir = await mkdtemp(join(tmpdir(), 'ap-bench-console-'));
const server = await startServer({ port: 0, dataDir: dir, logger: pino({ level: 'silent' }) });
const { key, userId } = await server.platform.createUserWithKey({ name: 'bench' });
// A full first page of projects to render after signing in.
for (let i = 0; i < 30; i++) await server.platform.createProject({ userId }, { name: `Project ${i}`, model: 'gpt-4o-mini', provider: 'openai' });
// A project with DOCUMENTS documents (rows as the pipeline leaves them) for the documents table.
const DOCUMENTS = Number(process.env.BENCH_CONSOLE_DOCUMENTS ?? 10_000);
const big = (await server.platform.createProject({ userId }, { name: 'Big library', model: 'gpt-4o-mini', provider: 'openai' })).project;
const documentsAt = new Date();
for (let d = 0; d < DOCUMENTS; d++) {
  await server.platform.storage.documents.insert({
    id: `doc_bench${String(d).padStart(6, '0')}`,
    userId,
    projectId: big.id,
    fileId: null,
    fileName: `report-${d}.pdf`,
    fileType: 'pdf',
    sourceType: 'upload',
    status: d % 50 === 0 ? 'failed' : 'completed',
    chunkCount: 12,
    vectorCount: 12,
    error: d % 50 === 0 ? 'Failed to index document: bench' : null,
    metadata: {},
    createdAt: new Date(documentsAt.getTime() + d),
    updatedAt: documentsAt,
  });
}
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
try {
  const rows = await weight();
  const js = rows.filter((r) => r.file.endsWith('.js'));
  console.log('console first load:');
  for (const r of rows) console.log(`  ${r.file}: ${kb(r.raw)} raw, ${kb(r.gzip)} gzipped`);
  console.log(`  JavaScript in all: ${kb(js.reduce((a, r) => a + r.raw, 0))} raw, ${kb(js.reduce((a, r) => a + r.gzip, 0))} gzipped (budget 150 KB gzipped)`);
  console.log('loaded when a screen is opened (not in the first load):');
  for (const r of await lazyChunks(rows)) console.log(`  ${r.file}: ${kb(r.raw)} raw, ${kb(r.gzip)} gzipped`);

  const interactive = [];
  const signedIn = [];
  let received = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const context = await browser.newContext();
    // Added through the DevTools protocol, so the page's CSP (no inline script) does not apply to it.
    await context.addInitScript(() => {
      new MutationObserver((_, observer) => {
        if (!document.getElementById('api-key')) return;
        window.consoleReady = performance.now();
        observer.disconnect();
      }).observe(document, { subtree: true, childList: true });
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#api-key');
    interactive.push(await page.evaluate(() => window.consoleReady));
    received = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter((e) => e.name.endsWith('.js'))
        .reduce((a, e) => a + e.encodedBodySize, 0),
    );
    await page.fill('#api-key', key);
    const clicked = performance.now();
    await page.click('button[type=submit]');
    await page.waitForSelector('h1#projects-title');
    await page.waitForSelector('table.list, .empty');
    signedIn.push(performance.now() - clicked);
    await context.close();
  }
  // The documents table of the project with DOCUMENTS documents: opening the knowledge tab until
  // its first page is rendered, then Next, and the status filter, each until the new rows show.
  const opened = [];
  const next = [];
  const filtered = [];
  for (let round = 0; round < ROUNDS; round++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.fill('#api-key', key);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1#projects-title');
    let t = performance.now();
    await page.goto(`${server.url}/console/#/projects/${big.id}/knowledge`);
    await page.waitForSelector(`table.list td:text("report-${DOCUMENTS - 1}.pdf")`);
    opened.push(performance.now() - t);
    t = performance.now();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForSelector(`table.list td:text("report-${DOCUMENTS - 21}.pdf")`);
    next.push(performance.now() - t);
    t = performance.now();
    await page.getByLabel('Status').selectOption('failed');
    await page.waitForSelector('table.list tbody tr[data-status="failed"]');
    await page.waitForFunction(() => document.querySelectorAll('table.list tbody tr[data-status="completed"]').length === 0);
    filtered.push(performance.now() - t);
    await context.close();
  }
  console.log(`  JavaScript received by Chromium: ${kb(received)} (the server sends it uncompressed)`);
  console.log(
    `documents table of a project with ${DOCUMENTS} documents, ${ROUNDS} rounds, median / max ms: tab opened to first page ${median(opened).toFixed(0)} / ${Math.max(...opened).toFixed(0)}, Next ${median(next).toFixed(0)} / ${Math.max(...next).toFixed(0)}, status filter ${median(filtered).toFixed(0)} / ${Math.max(...filtered).toFixed(0)}`,
  );
  console.log(
    `first screen interactive (navigation start to the sign-in form), ${ROUNDS} rounds: median ${median(interactive).toFixed(0)} ms, max ${Math.max(...interactive).toFixed(0)} ms (budget 1000 ms)`,
  );
  console.log(`signed in (click to the projects list), ${ROUNDS} rounds: median ${median(signedIn).toFixed(0)} ms, max ${Math.max(...signedIn).toFixed(0)} ms`);
} finally {
  await browser.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
