import type { Page } from 'playwright-core';
import { expect } from 'vitest';

// Measures of the page's layout taken in the browser (bounding boxes), for the layout tests:
// what sticks out of the screen, whether the cells of a table row line up, where the actions are.

/**
 * The elements that reach past the left or right edge of the viewport, each as `tag.class
 * "text"`: none when the page fits the screen. An element inside something that clips or
 * scrolls it (a visually hidden label, a scrolling tab bar) is that container's business, and
 * the container is measured itself. The skip link waits off-screen until it is focused.
 */
export function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const clippedByAncestor = (el: Element) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') return true;
      }
      return false;
    };
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width) out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide in ${width} px`);
    for (const el of Array.from(document.body.querySelectorAll('*'))) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || el.closest('.skip') || clippedByAncestor(el)) continue;
      if (r.right > width + 1 || r.left < -1)
        out.push(`${el.tagName.toLowerCase()}.${el.className} "${(el.textContent ?? '').trim().slice(0, 40)}" spans ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
    return out;
  });
}

/** The elements of the open dialog that reach past the dialog's own box. */
export function outsideDialog(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const dialog = document.querySelector('dialog[open]');
    if (!dialog) return ['no dialog is open'];
    const box = dialog.getBoundingClientRect();
    return Array.from(dialog.querySelectorAll('*'))
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1);
      })
      .map((el) => `${el.tagName.toLowerCase()} "${(el.textContent ?? '').trim().slice(0, 40)}"`);
  });
}

/** Expects nothing of the page to stick out of the screen (nor of the open dialog, if one is). */
export async function expectFits(page: Page, where: string): Promise<void> {
  expect(await overflowing(page), `${where}: elements past the edge of the screen`).toEqual([]);
  if (await page.locator('dialog[open]').count()) expect(await outsideDialog(page), `${where}: elements past the edge of the dialog`).toEqual([]);
}

export interface RowLine {
  /** The row's first cell's text, to name it. */
  readonly row: string;
  /** Largest difference between the baselines of the cells' first lines of text, px. */
  readonly baselines: number;
  /** Largest difference between the cells' tops, and between their bottoms, px. */
  readonly tops: number;
  readonly bottoms: number;
}

/**
 * For every row of every list table: how far apart its cells' first-line baselines, tops and
 * bottoms are. A baseline is measured with an empty inline-block put just before the first
 * text of the cell (such a box sits on the baseline of its line), then removed.
 */
export function rowLines(page: Page): Promise<RowLine[]> {
  return page.evaluate(() => {
    const spread = (values: number[]) => (values.length ? Math.max(...values) - Math.min(...values) : 0);
    const firstText = (cell: Element) => {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT, {
        acceptNode: (n) =>
          n.textContent?.trim() && n.parentElement && !n.parentElement.closest('.visually-hidden') && n.parentElement.getClientRects().length ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP,
      });
      return walker.nextNode();
    };
    const rows: { row: string; baselines: number; tops: number; bottoms: number }[] = [];
    for (const table of Array.from(document.querySelectorAll('table.list'))) {
      for (const row of Array.from((table as HTMLTableElement).tBodies[0]?.rows ?? [])) {
        const baselines: number[] = [];
        for (const cell of Array.from(row.cells)) {
          const text = firstText(cell);
          if (!text?.parentNode) continue;
          const probe = document.createElement('span');
          probe.style.display = 'inline-block';
          probe.style.width = '0';
          probe.style.height = '0';
          text.parentNode.insertBefore(probe, text);
          baselines.push(probe.getBoundingClientRect().bottom);
          probe.remove();
        }
        const boxes = Array.from(row.cells).map((c) => c.getBoundingClientRect());
        rows.push({
          row: (row.cells[0]?.textContent ?? '').trim().slice(0, 30),
          baselines: spread(baselines),
          tops: spread(boxes.map((b) => b.top)),
          bottoms: spread(boxes.map((b) => b.bottom)),
        });
      }
    }
    return rows;
  });
}

/** Expects at least one list table, and every row's cells to share their top, bottom and first baseline (within 1 px). */
export async function expectRowsAligned(page: Page, where: string): Promise<void> {
  const rows = await rowLines(page);
  expect(rows.length, `${where}: no table rows`).toBeGreaterThan(0);
  const off = rows.filter((r) => r.baselines > 1 || r.tops > 1 || r.bottoms > 1);
  expect(off, `${where}: rows whose cells do not line up`).toEqual([]);
}

/** The row actions (buttons in a table's actions cell) not wholly inside the viewport. */
export function actionsOffScreen(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    return Array.from(document.querySelectorAll('table.list td.actions button'))
      .filter((b) => {
        const r = b.getBoundingClientRect();
        return r.left < 0 || r.right > width;
      })
      .map((b) => b.getAttribute('aria-label') ?? b.textContent ?? '');
  });
}
