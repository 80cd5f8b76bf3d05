import { useState } from 'preact/hooks';
import { ApiError, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { fieldErrors } from '../../components/field-errors';
import { CheckField, describedBy, ErrorNote, Field } from '../../components/ui';
import { CodeEditor } from './code-editor';
import type { CodeLanguage } from './codemirror';

export type Tool = ResultOf<'/api/tools/{id}', 'get'>['tool'];

const FIELDS = ['name', 'description', 'language', 'code', 'parameters', 'dependencies', 'enabled', 'requiresApproval', 'exposeOverMcp'] as const;

/** What a new tool starts with: a `main(args)` that shows where the result and the logs go. */
export const TEMPLATES: Record<CodeLanguage, string> = {
  javascript: `// main(args) gets the arguments (checked against the parameters schema);
// what it returns is the tool's result. console.log goes to the run's logs.
async function main(args) {
  console.log('called with', JSON.stringify(args));
  return { ok: true };
}
`,
  python: `# main(args) gets the arguments (checked against the parameters schema);
# what it returns is the tool's result. print goes to the run's logs.
def main(args):
    print("called with", args)
    return {"ok": True}
`,
};
const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {}\n}';

interface Values {
  name: string;
  description: string;
  language: CodeLanguage;
  code: string;
  parameters: string;
  dependencies: string;
  enabled: boolean;
  requiresApproval: boolean;
  exposeOverMcp: boolean;
}

const toValues = (tool: Tool | null): Values => ({
  name: tool?.name ?? '',
  description: tool?.description ?? '',
  language: tool?.language ?? 'javascript',
  code: tool?.code ?? TEMPLATES.javascript,
  parameters: tool ? JSON.stringify(tool.parameters, null, 2) : EMPTY_SCHEMA,
  dependencies: tool?.dependencies.join(' ') ?? '',
  enabled: tool?.enabled ?? true,
  requiresApproval: tool?.requiresApproval ?? false,
  exposeOverMcp: tool?.exposeOverMcp ?? false,
});

/** The tool's switches the form sets (on create and on edit), each with what it means. */
const FLAGS = [
  ['requiresApproval', 'Requires approval', "The agent's calls of it wait until a person approves or denies them in the chat"],
  ['exposeOverMcp', 'Expose over MCP', "Offered to MCP clients of the project's own MCP endpoint, beside the agent"],
] as const;

/** Dependencies as the API takes them: a list of specs, written here separated by spaces, commas or lines. */
export const parseDependencies = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);

/**
 * Create (tool null) or edit a tool. The parameters schema is checked as JSON here; everything
 * else the service checks (the schema itself, the name, the dependencies it must provide), and
 * its message is shown next to the field it names. A tool's language is fixed once created
 * (the API's update takes no language).
 */
export function ToolForm({ projectId, tool, onSaved }: { projectId: string; tool: Tool | null; onSaved: (id: string, message: string) => void }) {
  const api = useApi();
  const [values, setValues] = useState<Values>(() => toValues(tool));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof Values>(name: K, value: Values[K]) => setValues((v) => ({ ...v, [name]: value }));

  // Counts the times the code was replaced from here, the editor's key (it owns its text).
  const [codeVersion, setCodeVersion] = useState(0);
  const chooseLanguage = (language: CodeLanguage) => {
    // A new tool still holding the other language's template gets this one's.
    if (values.code === TEMPLATES[values.language]) {
      setValues((v) => ({ ...v, language, code: TEMPLATES[language] }));
      setCodeVersion((n) => n + 1);
    } else {
      set('language', language);
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    let parameters: Record<string, unknown>;
    try {
      parameters = JSON.parse(values.parameters) as Record<string, unknown>;
      if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) throw new Error('not an object');
    } catch {
      return setErrors({ parameters: 'Not valid JSON: write a JSON Schema object such as {"type": "object", "properties": {"city": {"type": "string"}}}' });
    }
    setBusy(true);
    setErrors({});
    const dependencies = parseDependencies(values.dependencies);
    try {
      if (tool) {
        // Only what changed: a new code or dependency list readies the dependencies again.
        const before = toValues(tool);
        const changes = {
          ...(values.name !== before.name ? { name: values.name } : {}),
          ...(values.description !== before.description ? { description: values.description } : {}),
          ...(values.code !== before.code ? { code: values.code } : {}),
          ...(JSON.stringify(parameters) !== JSON.stringify(tool.parameters) ? { parameters } : {}),
          ...(dependencies.join(' ') !== tool.dependencies.join(' ') ? { dependencies } : {}),
          ...(values.requiresApproval !== before.requiresApproval ? { requiresApproval: values.requiresApproval } : {}),
          ...(values.exposeOverMcp !== before.exposeOverMcp ? { exposeOverMcp: values.exposeOverMcp } : {}),
        };
        const r = await api.call('put', '/api/tools/{id}', { params: { id: tool.id }, body: { toolId: tool.id, tool: changes } });
        onSaved(tool.id, r.message);
      } else {
        const r = await api.call('post', '/api/tools/create', {
          body: {
            projectId,
            name: values.name,
            description: values.description,
            language: values.language,
            code: values.code,
            parameters,
            dependencies,
            enabled: values.enabled,
            requiresApproval: values.requiresApproval,
            exposeOverMcp: values.exposeOverMcp,
          },
        });
        onSaved(r.tool.id, 'Tool created');
      }
    } catch (err) {
      setErrors(err instanceof ApiError && err.status === 400 ? fieldErrors(err, FIELDS) : { form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const text = (name: 'name' | 'description' | 'dependencies', label: string, hint: string, extra: Record<string, unknown> = {}) => (
    <Field id={`tool-${name}`} label={label} error={errors[name]} hint={hint}>
      <input id={`tool-${name}`} value={values[name]} onInput={(e) => set(name, e.currentTarget.value)} {...describedBy(`tool-${name}`, errors[name], true)} {...extra} />
    </Field>
  );

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="tool-form-title">
      <h2 id="tool-form-title">{tool ? `Edit ${tool.name}` : 'New tool'}</h2>
      <div class="grid">
        {text('name', 'Name', 'The function name the model sees: letters, digits, _ or -', { required: true, maxLength: 64 })}
        <Field id="tool-language" label="Language" error={errors.language} {...(tool ? { hint: 'Fixed once the tool is created' } : {})}>
          <select
            id="tool-language"
            value={values.language}
            disabled={Boolean(tool)}
            onChange={(e) => chooseLanguage(e.currentTarget.value as CodeLanguage)}
            {...describedBy('tool-language', errors.language, Boolean(tool))}
          >
            <option value="javascript">JavaScript</option>
            <option value="python">Python</option>
          </select>
        </Field>
        {text('dependencies', 'Dependencies', values.language === 'python' ? 'Python package names, separated by spaces' : 'npm packages (name or name@range), separated by spaces', {
          placeholder: values.language === 'python' ? 'e.g. attrs' : 'e.g. lodash-es@^4',
        })}
      </div>
      {text('description', 'Description', 'What the tool does: the model reads it to decide when to call it', { maxLength: 2000 })}
      <div class={`field${errors.code ? ' invalid' : ''}`}>
        <span class="label" id="tool-code-label">
          Code
        </span>
        <small class="hint" id="tool-code-hint">
          Defines main(args). Tab moves to the next field; indent with Ctrl+] and Ctrl+[ (⌘ on a Mac).
        </small>
        <CodeEditor key={codeVersion} id="tool-code" label="Code" value={values.code} language={values.language} invalid={Boolean(errors.code)} onChange={(code) => set('code', code)} />
        {errors.code ? (
          <small class="field-error" role="alert">
            {errors.code}
          </small>
        ) : null}
      </div>
      <Field id="tool-parameters" label="Parameters (JSON Schema of the arguments)" error={errors.parameters}>
        <textarea
          id="tool-parameters"
          class="mono"
          rows={6}
          spellcheck={false}
          value={values.parameters}
          onInput={(e) => set('parameters', e.currentTarget.value)}
          {...describedBy('tool-parameters', errors.parameters)}
        />
      </Field>
      {tool ? null : (
        <label class="check">
          <input type="checkbox" checked={values.enabled} onChange={(e) => set('enabled', e.currentTarget.checked)} /> Enabled (offered to the agent in chats)
        </label>
      )}
      {FLAGS.map(([name, label, hint]) => (
        <CheckField key={name} id={`tool-${name}`} label={label} hint={hint} checked={values[name]} error={errors[name]} onChange={(on) => set(name, on)} />
      ))}
      <ErrorNote message={errors.form} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : tool ? 'Save' : 'Create tool'}
        </button>
      </div>
    </form>
  );
}
