import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** An API error, as the service worded it; announced to screen readers. */
export function ErrorNote({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** Said while something is loaded (a status: screen readers announce it). */
export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** What to do when a list is empty. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children ? <p>{children}</p> : null}
    </div>
  );
}

/** Previous/next paging over an offset list, with where we are. */
export function Pager(props: { offset: number; limit: number; total: number; onOffset: (offset: number) => void; label: string }) {
  const { offset, limit, total, onOffset, label } = props;
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span aria-live="polite">
        {total === 0 ? 0 : offset + 1}–{last} of {total}
      </span>
      <button type="button" disabled={last >= total} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}

/**
 * A modal question (the native <dialog>: focus moves into it, Escape closes it, the page behind
 * is inert). `onConfirm` runs on the confirming button.
 */
export function ConfirmDialog(props: { open: boolean; title: string; children: ComponentChildren; confirm: string; onConfirm: () => void; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onClose={props.onClose}>
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
      </div>
    </dialog>
  );
}

/** A labelled form field with the service's message for it right below. */
export function Field(props: { id: string; label: string; error?: string | undefined; hint?: string; children: ComponentChildren }) {
  return (
    <div class={`field${props.error ? ' invalid' : ''}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <small id={`${props.id}-hint`} class="hint">
          {props.hint}
        </small>
      ) : null}
      {props.error ? (
        <small id={`${props.id}-error`} class="field-error" role="alert">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}

/** A checkbox with its label, a line of help under it, and the service's error about it. */
export function CheckField(props: { id: string; label: string; hint: string; checked: boolean; error?: string | undefined; onChange: (checked: boolean) => void }) {
  return (
    <div class={`field${props.error ? ' invalid' : ''}`}>
      <label class="check">
        <input type="checkbox" id={props.id} checked={props.checked} onChange={(e) => props.onChange(e.currentTarget.checked)} {...describedBy(props.id, props.error, true)} /> {props.label}
      </label>
      <small id={`${props.id}-hint`} class="hint">
        {props.hint}
      </small>
      {props.error ? (
        <small id={`${props.id}-error`} class="field-error" role="alert">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}

/** The aria attributes tying an input to its Field's hint and error. */
export const describedBy = (id: string, error: string | undefined, hint = false) => {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return { 'aria-describedby': ids || undefined, 'aria-invalid': error ? true : undefined };
};

/** Calls `fn` after `value` stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number, fn: (value: T) => void): void {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const timer = setTimeout(() => fn(value), ms);
    return () => clearTimeout(timer);
  }, [value]);
}

/** The `<option>`s of a `<select>`, one per value, each labelled with its value. */
export function Options({ values }: { values: readonly string[] }) {
  return (
    <>
      {values.map((v) => (
        <option key={v} value={v}>
          {v}
        </option>
      ))}
    </>
  );
}
