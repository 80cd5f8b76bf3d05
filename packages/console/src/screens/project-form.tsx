import { useState } from 'preact/hooks';
import { ApiError, messageOf, type ResultOf } from '../api/client';
import { useApi } from '../api/context';
import { MODEL_PROVIDERS } from '../api/enums';
import { fieldErrors } from '../components/field-errors';
import { describedBy, ErrorNote, Field, Options } from '../components/ui';
import { modelsHint, useCredentials, useModels } from './project-pickers';
import { optionsText, ProviderOptionsField, parseOptions } from './provider-options';

/** A project as the list answers it (what the form edits). */
export type Project = ResultOf<'/api/v1/projects', 'get'>['projects'][number];

type Provider = (typeof MODEL_PROVIDERS)[number];
const FIELDS = ['name', 'description', 'instructions', 'icon', 'color', 'model', 'provider', 'credentialId', 'providerOptions'] as const;
/** The model a new project's form starts with (its provider is openai). */
const DEFAULT_MODEL = 'gpt-4o-mini';
/** The service's limit on instructions (characters). */
const MAX_INSTRUCTIONS = 32_000;

/**
 * Create (project null) or edit a project; the service's messages land next to their fields.
 * The credential picker offers the caller's credentials of the chosen provider, or none named
 * ("Default": the provider's default credential, else the server's); the model field suggests
 * the models that upstream lists, and takes any name. The provider's options are JSON checked
 * against the provider's schema from the API's contract before sending.
 */
export function ProjectForm({ project, onDone }: { project: Project | null; onDone: (saved: boolean) => void }) {
  const api = useApi();
  const [values, setValues] = useState({
    name: project?.name ?? '',
    description: project?.description ?? '',
    instructions: project?.instructions ?? '',
    icon: project?.icon ?? '',
    color: project?.color ?? '',
    model: project?.model ?? DEFAULT_MODEL,
    provider: (project?.provider ?? 'openai') as Provider,
    credentialId: project?.credentialId ?? '',
    providerOptions: optionsText(project?.providerOptions),
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const { credentials, error: credentialsError } = useCredentials(api);
  const models = useModels(api, values.provider, values.credentialId);
  const ofProvider = credentials.filter((c) => c.provider === values.provider);
  // What "Default" means for this provider: your default credential of it, else the server's own.
  const fallback = ofProvider.find((c) => c.default);
  const set = (name: keyof typeof values) => (e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value });
  // Another provider's credential cannot be the project's: the choice goes back to the default. A model
  // picked from the old provider's list (or the new form's default) goes too: it is the old provider's.
  const setProvider = (e: Event) => {
    const oldModel = values.model === (project?.model ?? DEFAULT_MODEL) || (models.state === 'loaded' && models.ids.includes(values.model));
    setValues({ ...values, provider: (e.currentTarget as HTMLSelectElement).value as Provider, credentialId: '', model: oldModel ? '' : values.model });
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    const options = parseOptions(values.providerOptions, values.provider);
    if ('error' in options) {
      setErrors({ providerOptions: options.error });
      setBusy(false);
      document.getElementById('project-providerOptions')?.focus();
      return;
    }
    const body = { ...values, credentialId: values.credentialId || null, providerOptions: options.options };
    try {
      if (project) await api.call('patch', '/api/v1/projects/{id}', { params: { id: project.id }, body });
      else await api.call('post', '/api/projects/create', { body });
      onDone(true);
    } catch (err) {
      setErrors(err instanceof ApiError && (err.status === 400 || err.status === 404) ? fieldErrors(err, FIELDS) : { form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const input = (name: 'name' | 'icon' | 'color', label: string, extra: Record<string, unknown> = {}) => (
    <Field id={`project-${name}`} label={label} error={errors[name]}>
      <input id={`project-${name}`} value={values[name]} onInput={set(name)} {...describedBy(`project-${name}`, errors[name])} {...extra} />
    </Field>
  );
  const suggestions = models.state === 'loaded' ? models.ids : [];

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="project-form-title">
      <h2 id="project-form-title">{project ? `Edit ${project.name}` : 'New project'}</h2>
      <div class="grid">
        {input('name', 'Name', { required: true, maxLength: 200 })}
        <Field id="project-provider" label="Provider" error={errors.provider}>
          <select id="project-provider" value={values.provider} onChange={setProvider} {...describedBy('project-provider', errors.provider)}>
            <Options values={MODEL_PROVIDERS} />
          </select>
        </Field>
        <Field
          id="project-credentialId"
          label="Credential"
          error={errors.credentialId ?? credentialsError ?? undefined}
          hint={values.provider === 'local' ? 'The local provider takes no credential.' : 'Default follows your default credential of the provider (the server’s own when you have none).'}
        >
          <select
            id="project-credentialId"
            value={values.credentialId}
            onChange={set('credentialId')}
            disabled={values.provider === 'local'}
            {...describedBy('project-credentialId', errors.credentialId ?? credentialsError ?? undefined, true)}
          >
            <option value="">{fallback ? `Default (${fallback.name})` : 'Default (the server’s)'}</option>
            {ofProvider.map((c) => (
              <option key={c.id} value={c.id}>
                {`${c.name} (…${c.apiKeyLast4})`}
              </option>
            ))}
          </select>
        </Field>
        <Field id="project-model" label="Model" error={errors.model} hint={modelsHint(models)}>
          <input
            id="project-model"
            value={values.model}
            onInput={set('model')}
            required
            list="project-model-options"
            placeholder="Pick one offered or type its name"
            autocomplete="off"
            aria-busy={models.state === 'loading' ? true : undefined}
            {...describedBy('project-model', errors.model, true)}
          />
          <datalist id="project-model-options">
            {suggestions.map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
        </Field>
        {input('icon', 'Icon', { placeholder: 'e.g. 📚' })}
        {input('color', 'Colour', { placeholder: '#3b82f6' })}
      </div>
      <ProviderOptionsField provider={values.provider} value={values.providerOptions} error={errors.providerOptions} onChange={(text) => setValues({ ...values, providerOptions: text })} />
      <Field id="project-description" label="Description" error={errors.description} hint="What the project is for, shown to people. The model never sees it.">
        <textarea id="project-description" rows={2} value={values.description} onInput={set('description')} {...describedBy('project-description', errors.description, true)} />
      </Field>
      <Field
        id="project-instructions"
        label="Instructions"
        error={errors.instructions}
        hint={`The agent's system prompt: sent to the model at the start of every conversation (${values.instructions.length.toLocaleString('en')} of ${MAX_INSTRUCTIONS.toLocaleString('en')} characters).`}
      >
        <textarea
          id="project-instructions"
          rows={8}
          value={values.instructions}
          onInput={set('instructions')}
          placeholder="e.g. You are the support agent of ACME. Answer in two sentences at most."
          {...describedBy('project-instructions', errors.instructions, true)}
        />
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
