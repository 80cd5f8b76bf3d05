import { useState } from 'preact/hooks';
import { ApiError, type BodyOf, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { fieldErrors } from '../../components/field-errors';
import { Marked, queryTerms } from '../../components/marked';
import { describedBy, Empty, ErrorNote, Field, Options } from '../../components/ui';

type Hit = ResultOf<'/api/knowledge/search', 'post'>['documents'][number];
type SearchBody = BodyOf<'/api/knowledge/search', 'post'>;
const TYPES = ['hybrid', 'semantic', 'mrr'] as const;
const FIELDS = ['query', 'searchType', 'topK', 'alpha', 'minScore'];

/** A string from a chunk's metadata, when it is one. */
const meta = (hit: Hit, name: string): string | undefined => {
  const value = (hit.metadata as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
};

/** Try the project's search: query, type, topK, alpha, minScore; hits with their terms marked. */
export function SearchPlayground({ projectId }: { projectId: string }) {
  const api = useApi();
  const [form, setForm] = useState({ query: '', searchType: '', topK: '', alpha: '', minScore: '' });
  const [hits, setHits] = useState<{ terms: string[]; list: Hit[]; message: string } | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const set = (name: keyof typeof form) => (e: Event) => setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).value });

  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    const body: SearchBody = { projectId, query: form.query };
    if (form.searchType) body.searchType = form.searchType as SearchBody['searchType'];
    if (form.topK) body.topK = Number(form.topK);
    if (form.alpha) body.alpha = Number(form.alpha);
    if (form.minScore) body.minScore = Number(form.minScore);
    try {
      const answer = await api.call('post', '/api/knowledge/search', { body });
      setHits({ terms: queryTerms(form.query), list: answer.documents, message: answer.message });
    } catch (err) {
      setHits(null);
      setErrors(err instanceof ApiError && err.status === 400 ? fieldErrors(err, FIELDS) : { form: messageOf(err) });
    }
  };

  const number = (name: 'topK' | 'alpha' | 'minScore', label: string, attrs: Record<string, unknown>) => (
    <Field id={`search-${name}`} label={label} error={errors[name]}>
      <input id={`search-${name}`} type="number" value={form[name]} onInput={set(name)} placeholder="project default" {...attrs} {...describedBy(`search-${name}`, errors[name])} />
    </Field>
  );

  return (
    <section aria-labelledby="search-title" class="card">
      <h2 id="search-title">Search playground</h2>
      <form onSubmit={submit}>
        <Field id="search-query" label="Query" error={errors.query}>
          <input id="search-query" type="search" value={form.query} onInput={set('query')} required {...describedBy('search-query', errors.query)} />
        </Field>
        <div class="grid">
          <Field id="search-type" label="Search type" error={errors.searchType}>
            <select id="search-type" value={form.searchType} onChange={set('searchType')}>
              <option value="">project default</option>
              <Options values={TYPES} />
            </select>
          </Field>
          {/* No min/max in the browser: the service checks the ranges and says what is wrong. */}
          {number('topK', 'Top K', { step: 1 })}
          {number('alpha', 'Alpha (0 keyword … 1 semantic)', { step: 'any' })}
          {number('minScore', 'Minimum score', { step: 'any' })}
        </div>
        <ErrorNote message={errors.form} />
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      {hits && hits.list.length === 0 ? <Empty title={hits.message}>Try other words, a lower minimum score, or add documents first.</Empty> : null}
      {hits && hits.list.length > 0 ? (
        <ol class="hits" aria-label="Search results">
          {hits.list.map((hit) => (
            <li key={hit.id} class="hit">
              <div class="hit-head">
                <strong>{meta(hit, 'fileName') ?? 'document'}</strong>
                {meta(hit, 'pageNumber') ? <span>page {meta(hit, 'pageNumber')}</span> : null}
                {meta(hit, 'section') ? <span>§ {meta(hit, 'section')}</span> : null}
                <span class="score">score {hit.score.toFixed(3)}</span>
              </div>
              <p class="chunk">
                <Marked text={hit.content} terms={hits.terms} />
              </p>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
