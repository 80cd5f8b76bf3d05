import { useState } from 'preact/hooks';
import { ApiError, messageOf } from '../../api/client';
import { fieldErrors } from '../../components/field-errors';
import { describedBy, ErrorNote, Field } from '../../components/ui';
import { StepName } from './tool-steps';
import type { QuestionField, Waiting } from './waiting';

type Value = string | boolean | readonly string[];

/** A field's starting value: its default, else empty. */
function initial(f: QuestionField): Value {
  if (f.type === 'boolean') return f.default === true;
  if (f.type === 'array') return Array.isArray(f.default) ? f.default.map(String) : [];
  return f.default === undefined || f.default === null ? '' : String(f.default);
}

/** The answer's content: numbers as numbers, empty optional fields left out (the service applies their defaults). */
export function contentOf(fields: readonly QuestionField[], values: Readonly<Record<string, Value>>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (v === undefined || v === '') continue;
    content[f.name] = (f.type === 'number' || f.type === 'integer') && typeof v === 'string' ? Number(v) : v;
  }
  return content;
}

const INPUT_TYPES: Record<string, 'email' | 'url' | 'date' | 'datetime-local'> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

function Input({ f, id, value, error, onChange }: { f: QuestionField; id: string; value: Value; error: string | undefined; onChange: (v: Value) => void }) {
  const aria = describedBy(id, error, Boolean(f.description));
  if (f.type === 'boolean') return <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} {...aria} />;
  if (f.type === 'array') {
    const chosen = value as readonly string[];
    return (
      <select id={id} multiple onChange={(e) => onChange([...e.currentTarget.selectedOptions].map((o) => o.value))} {...aria}>
        {f.options?.map((o) => (
          <option key={o.value} value={o.value} selected={chosen.includes(o.value)}>
            {o.label}
          </option>
        ))}
      </select>
    );
  }
  if (f.options)
    return (
      <select id={id} value={value as string} onChange={(e) => onChange(e.currentTarget.value)} required={f.required} {...aria}>
        {f.required && value !== '' ? null : <option value="">(none)</option>}
        {f.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    );
  const onInput = (e: Event) => onChange((e.currentTarget as HTMLInputElement).value);
  if (f.type === 'number' || f.type === 'integer')
    return <input id={id} type="number" value={value as string} onInput={onInput} step={f.type === 'integer' ? 1 : 'any'} min={f.minimum} max={f.maximum} {...aria} />;
  const type = INPUT_TYPES[f.format ?? ''] ?? 'text';
  return <input id={id} type={type as 'text'} value={value as string} onInput={onInput} minLength={f.minLength} maxLength={f.maxLength} {...aria} />;
}

/**
 * An MCP server's question while its tool runs: a form built from the question's fields (their
 * defaults filled in), answered with Submit (accept: the service checks the values against the
 * server's schema; its 400 is shown at each field), Decline or Cancel. The browser's own checks
 * are off (`noValidate`): the service's words are the ones shown.
 */
export function QuestionForm({ item, onAnswer }: { item: Waiting; onAnswer: (decision: 'accept' | 'decline' | 'cancel', content?: Record<string, unknown>) => Promise<void> }) {
  const fields = item.fields ?? [];
  const [values, setValues] = useState<Record<string, Value>>(() => Object.fromEntries(fields.map((f) => [f.name, initial(f)])));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [closed, setClosed] = useState(false);
  const [busy, setBusy] = useState(false);
  const answer = async (decision: 'accept' | 'decline' | 'cancel') => {
    setBusy(true);
    setErrors({});
    try {
      await onAnswer(decision, decision === 'accept' ? contentOf(fields, values) : undefined);
    } catch (e) {
      setErrors(
        e instanceof ApiError && e.status === 400
          ? fieldErrors(
              e,
              fields.map((f) => f.name),
            )
          : { form: messageOf(e) },
      );
      if (e instanceof ApiError && (e.status === 409 || e.status === 404)) setClosed(true);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="waiting-item" aria-label={`Question of ${item.tool}`}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void answer('accept');
        }}
      >
        <p>
          <StepName name={item.tool} /> asks: <strong>{item.message}</strong>
        </p>
        {fields.map((f) => {
          const id = `q-${item.id}-${f.name}`;
          return (
            <Field key={f.name} id={id} label={`${f.title ?? f.name}${f.required ? '' : ' (optional)'}`} error={errors[f.name]} {...(f.description ? { hint: f.description } : {})}>
              <Input f={f} id={id} value={values[f.name] ?? ''} error={errors[f.name]} onChange={(v) => setValues((all) => ({ ...all, [f.name]: v }))} />
            </Field>
          );
        })}
        <ErrorNote message={errors.form} />
        {closed ? null : (
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Submit
            </button>
            <button type="button" disabled={busy} onClick={() => void answer('decline')}>
              Decline
            </button>
            <button type="button" disabled={busy} onClick={() => void answer('cancel')}>
              Cancel
            </button>
          </div>
        )}
      </form>
    </li>
  );
}
