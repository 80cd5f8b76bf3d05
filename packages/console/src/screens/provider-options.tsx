import { PROVIDER_OPTIONS } from '../api/enums';
import { type JsonSchema, schemaProblems } from '../components/json-schema-check';
import { describedBy, Field } from '../components/ui';

type Provider = keyof typeof PROVIDER_OPTIONS;

/** The options of a provider as the form starts with them: indented JSON, or empty for none. */
export const optionsText = (options: Record<string, unknown> | null | undefined) => (options && Object.keys(options).length > 0 ? JSON.stringify(options, null, 2) : '');

/**
 * The `providerOptions` of the text for `provider` (null when empty), or its problems: not JSON,
 * not an object, or not what the provider takes by its schema from the API's contract (each
 * problem `providerOptions.<path>: reason`). Checked before anything is sent; the service checks
 * again and its 400 is shown in its words.
 */
export function parseOptions(text: string, provider: Provider): { options: Record<string, unknown> | null } | { error: string } {
  if (text.trim() === '') return { options: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `Provider options are not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  const problems = schemaProblems(value, PROVIDER_OPTIONS[provider] as JsonSchema, 'providerOptions');
  return problems.length > 0 ? { error: problems.join('; ') } : { options: value as Record<string, unknown> };
}

/** A provider's options editor: JSON, with what the provider takes and its example (from the API's contract). */
export function ProviderOptionsField({ provider, value, error, onChange }: { provider: Provider; value: string; error: string | undefined; onChange: (text: string) => void }) {
  const schema = PROVIDER_OPTIONS[provider] as JsonSchema;
  const keys = Object.keys((schema.properties ?? {}) as object);
  const example = (schema.examples as unknown[] | undefined)?.[0];
  const hint =
    keys.length === 0
      ? `Provider ${provider} takes no options: leave this empty.`
      : `JSON: the options of ${provider} (${keys.join(', ')}), checked before saving. Empty: none.${example ? ` Example: ${JSON.stringify(example)}` : ''}`;
  return (
    <Field id="project-providerOptions" label="Provider options" error={error} hint={hint}>
      <textarea
        id="project-providerOptions"
        class="mono"
        rows={4}
        spellcheck={false}
        value={value}
        placeholder={example ? JSON.stringify(example, null, 2) : '(none)'}
        onInput={(e) => onChange((e.currentTarget as HTMLTextAreaElement).value)}
        {...describedBy('project-providerOptions', error, true)}
      />
      {example && value.trim() === '' ? (
        <button type="button" class="link" onClick={() => onChange(JSON.stringify(example, null, 2))}>
          Use the example
        </button>
      ) : null}
    </Field>
  );
}
