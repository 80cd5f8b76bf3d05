import { useRef, useState } from 'preact/hooks';
import { useApi } from '../../api/context';
import { describedBy, Field } from '../../components/ui';
import { ACCEPTED, type IndexingItem, indexAny, indexText, type Update } from './indexing';

let nextId = 1;

/** Drop or pick files, or paste text; each one shows its indexing progress and its outcome. */
export function AddDocuments({ projectId, onIndexed }: { projectId: string; onIndexed: () => void }) {
  const api = useApi();
  const [items, setItems] = useState<IndexingItem[]>([]);
  const [over, setOver] = useState(false);
  const [pasteName, setPasteName] = useState('pasted.md');
  const [pasteText, setPasteText] = useState('');
  const [pasteError, setPasteError] = useState<string | undefined>();
  const input = useRef<HTMLInputElement>(null);

  const start = (name: string, run: (update: Update) => Promise<void>) => {
    const id = nextId++;
    setItems((list) => [{ id, name, progress: 0, stage: 'Starting', status: 'working' }, ...list]);
    const update: Update = (patch) => setItems((list) => list.map((item) => (item.id === id ? { ...item, ...patch } : item)));
    void run(update).then(onIndexed);
  };
  const addFiles = (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) start(file.name, (update) => indexAny(api, projectId, file, update));
  };

  return (
    <section aria-labelledby="add-title" class="card">
      <h2 id="add-title">Add documents</h2>
      {/* Dropping is the mouse's shortcut; the keyboard's way is the Choose files button inside. */}
      <fieldset
        class={`drop${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          addFiles(e.dataTransfer?.files ?? null);
        }}
      >
        <legend class="visually-hidden">Files</legend>
        <p>Drop txt, md, html, pdf or docx files here, or</p>
        <label class="button" for="file-input">
          Choose files
        </label>
        <input
          id="file-input"
          ref={input}
          class="visually-hidden"
          type="file"
          multiple
          accept={ACCEPTED}
          onChange={(e) => {
            addFiles(e.currentTarget.files);
            e.currentTarget.value = '';
          }}
        />
      </fieldset>
      <details>
        <summary>Paste text</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            // Nothing to index: say so at the box rather than do nothing.
            if (!pasteText.trim()) return setPasteError(pasteText ? 'The text is only spaces: paste or type the text to index.' : 'The text is empty: paste or type the text to index.');
            const name = pasteName.trim() || 'pasted.txt';
            const text = pasteText;
            start(name, (update) => indexText(api, projectId, name, text, update));
            setPasteText('');
          }}
        >
          <Field id="paste-name" label="File name" hint="Its extension (.md, .txt, .html) says how the text is read.">
            <input id="paste-name" value={pasteName} onInput={(e) => setPasteName(e.currentTarget.value)} {...describedBy('paste-name', undefined, true)} />
          </Field>
          <Field id="paste-text" label="Text" error={pasteError}>
            <textarea
              id="paste-text"
              rows={5}
              value={pasteText}
              onInput={(e) => {
                setPasteText(e.currentTarget.value);
                setPasteError(undefined);
              }}
              {...describedBy('paste-text', pasteError)}
            />
          </Field>
          <button type="submit" class="primary">
            Index text
          </button>
        </form>
      </details>
      {items.length > 0 ? (
        <ul class="indexing" aria-label="Indexing">
          {items.map((item) => (
            <li key={item.id} class={item.status} data-status={item.status}>
              <span class="name">{item.name}</span>
              {/* No value while a stage has no measure (an indeterminate bar); a failed one stops at 0. */}
              <progress max={100} value={item.status === 'failed' ? 0 : (item.progress ?? undefined)} aria-label={`${item.name} progress`} />
              <span class="stage" aria-live="polite">
                {item.status === 'working' && item.progress !== null ? `${item.stage} (${item.progress}%)` : item.status === 'completed' ? 'Indexed' : item.stage}
              </span>
              {item.error ? (
                <span class="error" role="alert">
                  {item.error}
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
