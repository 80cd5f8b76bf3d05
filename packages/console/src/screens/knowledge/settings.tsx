import { useEffect, useState } from 'preact/hooks';
import { ApiError, type BodyOf, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { VECTOR_STORES } from '../../api/enums';
import { fieldErrors } from '../../components/field-errors';
import { describedBy, ErrorNote, Field, Options } from '../../components/ui';
import { ReindexOffer } from './reindex';

type Change = BodyOf<'/api/knowledge/settings', 'put'>['settings'];
type Loaded = ResultOf<'/api/knowledge/settings', 'get'>;
type Effective = Loaded['settings'];
const TYPES = ['hybrid', 'semantic', 'mrr'] as const;
const NUMBERS = ['chunkSize', 'chunkOverlap', 'topK', 'minScore', 'alpha'] as const;
const FIELDS = ['vectorstoreProvider', 'vectorStoreConfig', 'embeddingModel', 'searchType', ...NUMBERS] as const;
type Name = (typeof FIELDS)[number];
/** Checks that name their field only inside the sentence. */
const ALIASES = { 'vectorstore configuration': 'vectorStoreConfig', 'vector store': 'vectorStoreConfig' };

/** The form's text of each setting: the project's own value, or empty for a default (shown as the placeholder). */
type Form = Record<Name, string>;

const text = (name: Name, value: Effective[Name]): string => (value === null || value === undefined ? '' : name === 'vectorStoreConfig' ? JSON.stringify(value, null, 2) : String(value));

const toForm = ({ settings, defaults }: Loaded): Form => Object.fromEntries(FIELDS.map((name) => [name, defaults.includes(name) ? '' : text(name, settings[name])])) as Form;

/** What an empty field means: the default in effect, as GET answered it. */
function placeholder(name: Name, loaded: Loaded): string {
  const value = loaded.defaults.includes(name) ? loaded.settings[name] : undefined;
  if (name === 'minScore') return 'default (none)';
  if (name === 'embeddingModel') return 'default (built-in)';
  return value === undefined || value === null ? 'default' : `default (${text(name, value)})`;
}

/**
 * The project's RAG settings (vector store included). Only what was changed is sent: a field
 * emptied goes back to its default (`null`), the others keep their stored value. The service
 * validates them (and tries a vector store before accepting it); its message for a field is
 * shown next to that field. Secrets of the vector store come back masked and are kept unless
 * the configuration is changed. A change of chunking offers re-indexing the documents.
 */
export function SettingsForm({ projectId, onDocumentsChanged }: { projectId: string; onDocumentsChanged?: () => void }) {
  const api = useApi();
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState<string | null>(null);
  const [offerReindex, setOfferReindex] = useState(false);
  const [busy, setBusy] = useState(false);

  const load = () =>
    api
      .call('get', '/api/knowledge/settings', { query: { projectId } })
      .then((r) => {
        setLoaded(r);
        setForm(toForm(r));
      })
      .catch((e) => setErrors({ form: messageOf(e) }));
  useEffect(() => {
    void load();
  }, [projectId]);
  if (!form || !loaded) return <ErrorNote message={errors.form} />;
  const set = (name: Name) => (e: Event) => setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).value });

  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setSaved(null);
    const before = toForm(loaded);
    const change: Record<string, unknown> = {};
    for (const name of FIELDS) {
      const now = form[name].trim();
      if (now === before[name].trim()) continue;
      if (now === '') change[name] = null;
      else if (name === 'vectorStoreConfig') {
        try {
          change[name] = JSON.parse(now) as Record<string, unknown>;
        } catch {
          return setErrors({ vectorStoreConfig: 'Not valid JSON: write an object such as {"endpoint": "http://127.0.0.1:6333", "indexName": "docs"}' });
        }
      } else change[name] = (NUMBERS as readonly string[]).includes(name) ? Number(now) : now;
    }
    setBusy(true);
    try {
      const answer = await api.call('put', '/api/knowledge/settings', { body: { projectId, settings: change as Change } });
      setSaved(answer.message);
      if (answer.reindex === 'suggested') setOfferReindex(true);
      if (answer.reindex === 'started') onDocumentsChanged?.();
      await load();
    } catch (err) {
      setErrors(err instanceof ApiError && err.status === 400 ? fieldErrors(err, FIELDS, ALIASES) : { form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const choice = (name: 'vectorstoreProvider' | 'searchType', label: string, options: readonly string[]) => (
    <Field id={`settings-${name}`} label={label} error={errors[name]}>
      <select id={`settings-${name}`} value={form[name]} onChange={set(name)} {...describedBy(`settings-${name}`, errors[name])}>
        <option value="">{placeholder(name, loaded)}</option>
        <Options values={options} />
      </select>
    </Field>
  );
  const number = (name: (typeof NUMBERS)[number], label: string, step: number | 'any') => (
    <Field id={`settings-${name}`} label={label} error={errors[name]}>
      <input id={`settings-${name}`} type="number" step={step} value={form[name]} onInput={set(name)} placeholder={placeholder(name, loaded)} {...describedBy(`settings-${name}`, errors[name])} />
    </Field>
  );

  return (
    <section aria-labelledby="settings-title" class="card">
      <h2 id="settings-title">RAG settings</h2>
      <form onSubmit={submit}>
        <p class="hint">Empty fields use the default shown in them. Changing the chunking applies to documents added from now on; documents already indexed can be re-indexed.</p>
        <div class="grid">
          {choice('vectorstoreProvider', 'Vector store', VECTOR_STORES)}
          <Field id="settings-embeddingModel" label="Embedding model" error={errors.embeddingModel}>
            <input
              id="settings-embeddingModel"
              value={form.embeddingModel}
              onInput={set('embeddingModel')}
              placeholder={placeholder('embeddingModel', loaded)}
              {...describedBy('settings-embeddingModel', errors.embeddingModel)}
            />
          </Field>
          {choice('searchType', 'Search type', TYPES)}
          {number('chunkSize', 'Chunk size (tokens)', 1)}
          {number('chunkOverlap', 'Chunk overlap (tokens)', 1)}
          {number('topK', 'Top K', 1)}
          {number('minScore', 'Minimum score', 'any')}
          {number('alpha', 'Alpha', 'any')}
        </div>
        <Field
          id="settings-vectorStoreConfig"
          label="Vector store configuration (JSON)"
          error={errors.vectorStoreConfig}
          hint="endpoint, indexName, apiKey… as the store needs; secrets come back masked."
        >
          <textarea
            id="settings-vectorStoreConfig"
            rows={4}
            spellcheck={false}
            value={form.vectorStoreConfig}
            onInput={set('vectorStoreConfig')}
            {...describedBy('settings-vectorStoreConfig', errors.vectorStoreConfig, true)}
          />
        </Field>
        <ErrorNote message={errors.form} />
        {saved ? (
          <p class="ok" role="status">
            {saved}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Checking…' : 'Save settings'}
          </button>
        </div>
      </form>
      {offerReindex ? <ReindexOffer projectId={projectId} onProgress={() => onDocumentsChanged?.()} /> : null}
    </section>
  );
}
