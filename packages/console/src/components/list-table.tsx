import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

/** A column head: its label, or `{ label, number: true }` for a right-aligned count or size. */
export type Column = string | { readonly label: string; readonly number: true };

const labelOf = (c: Column) => (typeof c === 'string' ? c : c.label);

/**
 * Records as a table: a caption for screen readers, the column heads, then the rows given as
 * children, whose last cell holds the row's actions (`<td class="actions">`, its head named for
 * screen readers only). On a phone each row is a card (styles.css): its cells stacked, each
 * after its column's name, which is written here on every cell as `data-label` after each
 * render, so the screens' rows need not repeat it.
 */
export function ListTable({ caption, columns, children }: { caption: string; columns: readonly Column[]; children: ComponentChildren }) {
  const table = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    const labels = columns.map(labelOf);
    for (const row of Array.from(table.current?.tBodies[0]?.rows ?? [])) {
      Array.from(row.cells).forEach((cell, i) => {
        const label = labels[i] ?? '';
        if (cell.dataset.label !== label) cell.dataset.label = label;
      });
    }
  });
  return (
    <table class="list" ref={table}>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) =>
            typeof c === 'string' ? (
              <th key={c} scope="col">
                {c}
              </th>
            ) : (
              <th key={c.label} scope="col" class="number">
                {c.label}
              </th>
            ),
          )}
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/**
 * A row's action button. Its accessible name says what it acts on (`Delete Support desk`), since
 * every row has the same visible word.
 */
export function RowAction({ action, target, danger = false, onClick }: { action: string; target: string; danger?: boolean; onClick: () => void }) {
  return (
    <button type="button" class={danger ? 'danger' : undefined} onClick={onClick} aria-label={`${action} ${target}`}>
      {action}
    </button>
  );
}
