import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Copies `text`: the Clipboard API where the page may use it (a secure context such as
 * http://127.0.0.1, with the user's permission); else it selects the field's text and asks the
 * browser to copy the selection (what works on a plain-http address), and says when neither
 * worked, leaving the text selected for Ctrl+C.
 */
async function copyText(text: string, field: HTMLInputElement | null): Promise<'copied' | 'selected'> {
  try {
    await navigator.clipboard.writeText(text);
    return 'copied';
  } catch {
    field?.focus();
    field?.select();
    // execCommand is deprecated but is the only copy a non-secure page has.
    return document.execCommand?.('copy') ? 'copied' : 'selected';
  }
}

/**
 * The key just created, shown once: the service never answers it again, so the dialog says so
 * and offers a copy button. Closing it drops the key from the page (nothing keeps it).
 */
export function NewKeyDialog({ created, onClose }: { created: { name: string; key: string } | null; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const [copy, setCopy] = useState<'copied' | 'selected' | null>(null);
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    setCopy(null);
    if (created && !d.open) d.showModal();
    if (!created && d.open) d.close();
  }, [created]);

  return (
    <dialog ref={dialog} aria-labelledby="new-key-title" aria-describedby="new-key-note" onClose={onClose}>
      <h2 id="new-key-title">New API key: {created?.name}</h2>
      <p id="new-key-note">
        <strong>Copy this key now: it will not be shown again.</strong> The service keeps only a hash of it. Send it as <code>Authorization: Bearer …</code>.
      </p>
      <label for="new-key-value">API key</label>
      <div class="copy-row">
        <input id="new-key-value" class="key-value" ref={field} readOnly value={created?.key ?? ''} spellcheck={false} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" class="primary" onClick={async () => created && setCopy(await copyText(created.key, field.current))}>
          Copy
        </button>
      </div>
      <p class="hint" aria-live="polite">
        {copy === 'copied' ? 'Copied to the clipboard.' : copy === 'selected' ? 'The browser did not allow copying: the key is selected, press Ctrl+C (⌘C).' : ''}
      </p>
      <div class="actions">
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </dialog>
  );
}
