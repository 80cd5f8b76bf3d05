import type { ComponentChildren } from 'preact';

/** A column head: its label, or `{ label, number: true }` for a right-aligned count or size. */
export type Column = string | { readonly label: string; readonly number: true };

/**
 * Records as a table: a caption for screen readers, the column heads, then the rows given as
 * children, whose last cell holds the row's actions (its head is named for screen readers only).
 */
export function ListTable({ caption, columns, children }: { caption: string; columns: readonly Column[]; children: ComponentChildren }) {
  return (
    <table class="list">
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
