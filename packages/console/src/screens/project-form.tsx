import { useState } from 'preact/hooks';
import { ApiError, messageOf } from '../api/client';
import { useApi } from '../app';
import { fieldErrors } from '../components/field-errors';
import { describedBy, ErrorNote, Field, Options } from '../components/ui';
import type { Project } from './projects';

const PROVIDERS = ['openai', 'ollama', 'local'] as const;
type Provider = (typeof PROVIDERS)[number];
const FIELDS = ['name', 'description', 'icon', 'color', 'model', 'provider'] as const;

/** Create (project null) or edit a project; the service's messages land next to their fields. */
export function ProjectForm({ project, onDone }: { project: Project | null; onDone: (saved: boolean) => void }) {
  const api = useApi();
  const [values, setValues] = useState({
    name: project?.name ?? '',
    description: project?.description ?? '',
    icon: project?.icon ?? '',
    color: project?.color ?? '',
    model: project?.model ?? 'gpt-4o-mini',
    provider: (project?.provider ?? 'openai') as Provider,
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const set = (name: keyof typeof values) => (e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      if (project) await api.call('patch', '/api/v1/projects/{id}', { params: { id: project.id }, body: values });
      else await api.call('post', '/api/projects/create', { body: values });
      onDone(true);
    } catch (err) {
      setErrors(err instanceof ApiError && err.status === 400 ? fieldErrors(err.message, FIELDS) : { form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const input = (name: (typeof FIELDS)[number], label: string, extra: Record<string, unknown> = {}) => (
    <Field id={`project-${name}`} label={label} error={errors[name]}>
      <input id={`project-${name}`} value={values[name]} onInput={set(name)} {...describedBy(`project-${name}`, errors[name])} {...extra} />
    </Field>
  );

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="project-form-title">
      <h2 id="project-form-title">{project ? `Edit ${project.name}` : 'New project'}</h2>
      <div class="grid">
        {input('name', 'Name', { required: true, maxLength: 200 })}
        {input('model', 'Model', { required: true })}
        <Field id="project-provider" label="Provider" error={errors.provider}>
          <select id="project-provider" value={values.provider} onChange={set('provider')} {...describedBy('project-provider', errors.provider)}>
            <Options values={PROVIDERS} />
          </select>
        </Field>
        {input('icon', 'Icon', { placeholder: 'e.g. 📚' })}
        {input('color', 'Colour', { placeholder: '#3b82f6' })}
      </div>
      <Field id="project-description" label="Description" error={errors.description}>
        <textarea id="project-description" rows={2} value={values.description} onInput={set('description')} {...describedBy('project-description', errors.description)} />
      </Field>
      <ErrorNote message={errors.form} />
      <div class="actions">
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          {project ? 'Save' : 'Create project'}
        </button>
      </div>
    </form>
  );
}
