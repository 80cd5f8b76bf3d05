import { describedBy, Field } from '../../components/ui';
import type { ResponseFormat } from './answer-stream';

/** The structured output control's state: none (free text), any JSON object, or JSON that follows a named schema. */
export interface FormatChoice {
  readonly kind: 'none' | 'json_object' | 'json_schema';
  readonly name: string;
  readonly schema: string;
}

export const NO_FORMAT: FormatChoice = { kind: 'none', name: 'answer', schema: '{\n  "type": "object",\n  "properties": {},\n  "required": []\n}' };

/**
 * The `response_format` of a choice, or the problem of its schema text (checked here, before
 * anything is sent: it must be a JSON object). The service checks the rest (that it compiles,
 * its size) and checks the answer against it.
 */
export function responseFormatOf(choice: FormatChoice): { format?: ResponseFormat; error?: string } {
  if (choice.kind === 'none') return {};
  if (choice.kind === 'json_object') return { format: { type: 'json_object' } };
  let schema: unknown;
  try {
    schema = JSON.parse(choice.schema);
  } catch (e) {
    return { error: `Schema is not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { error: 'Schema must be a JSON object (a JSON Schema)' };
  return { format: { type: 'json_schema', json_schema: { name: choice.name.trim(), schema: schema as Record<string, unknown> } } };
}

const KINDS = [
  ['none', 'None (text)'],
  ['json_object', 'JSON object'],
  ['json_schema', 'JSON schema'],
] as const;

/**
 * Structured output of the next answers (`response_format`): none, a JSON object, or JSON
 * following a schema with its name. The answer is checked by the service; one that does not
 * comply ends with the service's error.
 */
export function ResponseFormatControl({ choice, error, onChange }: { choice: FormatChoice; error: string | undefined; onChange: (choice: FormatChoice) => void }) {
  const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  return (
    <details class="format" open={choice.kind !== 'none' || Boolean(error)}>
      <summary>Structured output{choice.kind === 'none' ? '' : `: ${KINDS.find(([k]) => k === choice.kind)?.[1]}`}</summary>
      <Field id="format-kind" label="Answer format">
        <select id="format-kind" value={choice.kind} onChange={(e) => onChange({ ...choice, kind: value(e) as FormatChoice['kind'] })}>
          {KINDS.map(([kind, label]) => (
            <option key={kind} value={kind}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      {choice.kind === 'json_schema' ? (
        <>
          <Field id="format-name" label="Schema name" hint="Letters, digits, _ and -.">
            <input
              id="format-name"
              value={choice.name}
              required
              maxLength={64}
              pattern="[A-Za-z0-9_\-]+"
              onInput={(e) => onChange({ ...choice, name: value(e) })}
              {...describedBy('format-name', undefined, true)}
            />
          </Field>
          <Field id="format-schema" label="Schema" error={error} hint="A JSON Schema of the answer; checked as JSON before it is sent.">
            <textarea
              id="format-schema"
              class="mono"
              rows={6}
              spellcheck={false}
              value={choice.schema}
              onInput={(e) => onChange({ ...choice, schema: value(e) })}
              {...describedBy('format-schema', error, true)}
            />
          </Field>
        </>
      ) : null}
    </details>
  );
}
