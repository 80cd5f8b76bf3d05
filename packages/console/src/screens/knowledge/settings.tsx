import { useEffect, useState } from 'preact/hooks';
import { ApiError, type BodyOf, messageOf } from '../../api/client';
import { useApi } from '../../app';
import { fieldErrors } from '../../components/field-errors';
import { describedBy, ErrorNote, Field, Options } from '../../components/ui';

type Settings = BodyOf<'/api/knowledge/settings', 'put'>['settings'];
const STORES = ['builtin', 'qdrant', 'chroma', 'pinecone', 'weaviate'] as const;
const TYPES = ['hybrid', 'semantic', 'mrr'] as const;
const NUMBERS = ['chunkSize', 'chunkOverlap', 'topK', 'minScore', 'alpha'] as const;
const FIELDS = ['vectorstoreProvider', 'vectorStoreConfig', 'embeddingModel', 'searchType', ...NUMBERS] as const;
/** Checks that name their field only inside the sentence. */
const ALIASES = { 'vectorstore configuration': 'vectorStoreConfig', 'vector store': 'vectorStoreConfig' };

type Form = Record<(typeof FIELDS)[number], string>;

const toForm = (s: Settings): Form => ({
  ...(Object.fromEntries(NUMBERS.map((n) => [n, s[n] === undefined ? '' : String(s[n])])) as Record<(typeof NUMBERS)[number], string>),
  vectorstoreProvider: s.vectorstoreProvider ?? '',
  vectorStoreConfig: s.vectorStoreConfig ? JSON.stringify(s.vectorStoreConfig, null, 2) : '',
  embeddingModel: s.embeddingModel ?? '',
  searchType: s.searchType ?? '',
});

/**
 * The project's RAG settings (vector store included). The service validates them (and tries a
 * vector store before accepting it); its message for a field is shown next to that field.
 * Secrets of the vector store come back masked and are kept when sent back unchanged.
 */
export function SettingsForm({ projectId }: { projectId: string }) {
  const api = useApi();
  const [form, setForm] = useState<Form | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .call('get', '/api/knowledge/settings', { query: { projectId } })
      .then((r) => setForm(toForm(r.settings as Settings)))
      .catch((e) => setErrors({ form: messageOf(e) }));
  }, [projectId]);
  if (!form) return <ErrorNote message={errors.form} />;
  const set = (name: keyof Form) => (e: Event) => setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).value });

  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setSaved(null);
    const settings: Settings = {};
    if (form.vectorstoreProvider) settings.vectorstoreProvider = form.vectorstoreProvider as Settings['vectorstoreProvider'];
    if (form.embeddingModel.trim()) settings.embeddingModel = form.embeddingModel.trim();
    if (form.searchType) settings.searchType = form.searchType as Settings['searchType'];
    for (const n of NUMBERS) if (form[n].trim()) settings[n] = Number(form[n]);
    if (form.vectorStoreConfig.trim()) {
      try {
        settings.vectorStoreConfig = JSON.parse(form.vectorStoreConfig) as Record<string, unknown>;
      } catch {
        return setErrors({ vectorStoreConfig: 'Not valid JSON: write an object such as {"endpoint": "http://127.0.0.1:6333", "indexName": "docs"}' });
      }
    }
    setBusy(true);
    try {
      setSaved((await api.call('put', '/api/knowledge/settings', { body: { projectId, settings } })).message);
    } catch (err) {
      setErrors(err instanceof ApiError && err.status === 400 ? fieldErrors(err.message, FIELDS, ALIASES) : { form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const choice = (name: 'vectorstoreProvider' | 'searchType', label: string, options: readonly string[]) => (
    <Field id={`settings-${name}`} label={label} error={errors[name]}>
      <select id={`settings-${name}`} value={form[name]} onChange={set(name)} {...describedBy(`settings-${name}`, errors[name])}>
        <option value="">default</option>
        <Options values={options} />
      </select>
    </Field>
  );
  const number = (name: (typeof NUMBERS)[number], label: string, step: number | 'any') => (
    <Field id={`settings-${name}`} label={label} error={errors[name]}>
      <input id={`settings-${name}`} type="number" step={step} value={form[name]} onInput={set(name)} placeholder="default" {...describedBy(`settings-${name}`, errors[name])} />
    </Field>
  );

  return (
    <section aria-labelledby="settings-title" class="card">
      <h2 id="settings-title">RAG settings</h2>
      <form onSubmit={submit}>
        <div class="grid">
          {choice('vectorstoreProvider', 'Vector store', STORES)}
          <Field id="settings-embeddingModel" label="Embedding model" error={errors.embeddingModel}>
            <input id="settings-embeddingModel" value={form.embeddingModel} onInput={set('embeddingModel')} placeholder="default (built-in)" {...describedBy('settings-embeddingModel', errors.embeddingModel)} />
          </Field>
          {choice('searchType', 'Search type', TYPES)}
          {number('chunkSize', 'Chunk size (tokens)', 1)}
          {number('chunkOverlap', 'Chunk overlap (tokens)', 1)}
          {number('topK', 'Top K', 1)}
          {number('minScore', 'Minimum score', 'any')}
          {number('alpha', 'Alpha', 'any')}
        </div>
        <Field id="settings-vectorStoreConfig" label="Vector store configuration (JSON)" error={errors.vectorStoreConfig} hint="endpoint, indexName, apiKey… as the store needs; secrets come back masked.">
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
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Save settings'}
        </button>
      </form>
    </section>
  );
}
