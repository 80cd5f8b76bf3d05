import { useEffect, useRef, useState } from 'preact/hooks';
import type { CodeEditorHandle, CodeLanguage } from './codemirror';

/**
 * The tool's code, in CodeMirror once its chunk has loaded (a dynamic import: the console's
 * first load does not carry the editor). Until then, and if the chunk cannot be loaded, a plain
 * textarea holds the same text, so the code can always be read and edited.
 *
 * The editor owns its text once mounted: `value` is read when it mounts, then only reported
 * back through `onChange` (writing each reported value back in would undo keys typed since).
 * To put another text in, give the component another `key`.
 */
export function CodeEditor(props: { id: string; label: string; value: string; language: CodeLanguage; invalid: boolean; onChange: (value: string) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<CodeEditorHandle | null>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');
  // The latest text and callback, for the editor created once.
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    let cancelled = false;
    import('./codemirror')
      .then(({ mountCodeEditor }) => {
        const el = host.current;
        if (cancelled || !el) return;
        const { value, language, label } = latest.current;
        return mountCodeEditor({ host: el, text: value, language, label, onChange: (text) => latest.current.onChange(text) }).then((handle) => {
          if (cancelled) return handle.destroy();
          editor.current = handle;
          setState('ready');
        });
      })
      .catch(() => cancelled || setState('failed'));
    return () => {
      cancelled = true;
      editor.current?.destroy();
      editor.current = null;
    };
  }, []);

  useEffect(() => {
    void editor.current?.setLanguage(props.language);
  }, [props.language]);
  return (
    <div class={`code-editor${props.invalid ? ' invalid' : ''}`} data-state={state}>
      <div id={props.id} ref={host} class="code-host" hidden={state !== 'ready'} />
      {state === 'ready' ? null : (
        <>
          {state === 'loading' ? (
            <p class="muted" aria-live="polite">
              Loading the code editor…
            </p>
          ) : (
            <p class="muted">The code editor could not be loaded: plain text editing.</p>
          )}
          <textarea
            aria-label={props.label}
            class="code-fallback"
            rows={12}
            spellcheck={false}
            value={props.value}
            onInput={(e) => props.onChange(e.currentTarget.value)}
            aria-invalid={props.invalid || undefined}
          />
        </>
      )}
    </div>
  );
}
