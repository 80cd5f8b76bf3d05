import { PlatformError } from '../errors.js';
import type { FormField } from '../schemas/approvals.js';

type Schema = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The choices of an enum property (`enum` with optional `enumNames`, `oneOf`/`anyOf` of `const` and `title`). */
function optionsOf(schema: Schema): { value: string; label: string }[] | undefined {
  const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
  if (Array.isArray(schema.enum)) return schema.enum.filter((v) => typeof v === 'string').map((value, i) => ({ value, label: str(names[i]) ?? value }));
  const listed = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (!listed) return undefined;
  return listed.flatMap((o) => {
    const value = str((o as Schema)?.const);
    return value === undefined ? [] : [{ value, label: str((o as Schema).title) ?? value }];
  });
}

/**
 * The fields of an elicitation's form (MCP's restricted schema: an object of strings, numbers,
 * integers, booleans and enums, single or multiple), in the schema's order. Properties of
 * other types are left out (they cannot be shown as a field).
 */
export function formFields(schema: Schema): FormField[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties).flatMap(([name, p]): FormField[] => {
    const type = p?.type;
    if (type !== 'string' && type !== 'number' && type !== 'integer' && type !== 'boolean' && type !== 'array') return [];
    const options = type === 'array' ? optionsOf((p.items ?? {}) as Schema) : optionsOf(p);
    if (type === 'array' && !options) return [];
    const field: FormField = { name, type, required: required.has(name) };
    const copy = { title: str(p.title), description: str(p.description), format: str(p.format) };
    for (const [k, v] of Object.entries(copy)) if (v !== undefined) (field as Record<string, unknown>)[k] = v;
    for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems'] as const) if (num(p[k]) !== undefined) (field as Record<string, unknown>)[k] = num(p[k]);
    if (p.default !== undefined) field.default = p.default;
    if (options) field.options = options;
    return [field];
  });
}

const FORMATS: Record<string, RegExp> = {
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uri: /^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/,
};

/** Why `value` does not fit `field`, or undefined when it does. */
function problem(field: FormField, value: unknown): string | undefined {
  const choices = field.options?.map((o) => o.value);
  switch (field.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (field.type === 'integer' && !Number.isInteger(value)) return 'must be an integer';
      if (field.minimum !== undefined && value < field.minimum) return `must be at least ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `must be at most ${field.maximum}`;
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return 'must be a list of strings';
      const bad = value.find((v) => !choices?.includes(v));
      if (bad !== undefined) return `${JSON.stringify(bad)} is not one of ${choices?.join(', ')}`;
      if (field.minItems !== undefined && value.length < field.minItems) return `must have at least ${field.minItems} items`;
      if (field.maxItems !== undefined && value.length > field.maxItems) return `must have at most ${field.maxItems} items`;
      return undefined;
    }
    default: {
      if (typeof value !== 'string') return 'must be a string';
      if (choices && !choices.includes(value)) return `must be one of ${choices.join(', ')}`;
      if (field.minLength !== undefined && value.length < field.minLength) return `must be at least ${field.minLength} characters`;
      if (field.maxLength !== undefined && value.length > field.maxLength) return `must be at most ${field.maxLength} characters`;
      const format = field.format ? FORMATS[field.format] : undefined;
      if (format && !format.test(value)) return `must be a valid ${field.format}`;
      return undefined;
    }
  }
}

/**
 * An accepted answer checked against the form's schema: defaults applied to fields left out,
 * every required field present, every value of its field's type and range; fields the form
 * does not have are refused. Throws `invalid_request` naming each field at fault (`content.<name>`).
 */
export function checkForm(schema: Schema, content: Record<string, unknown>): Record<string, unknown> {
  const fields = formFields(schema);
  const issues: { path: (string | number)[]; code: string; message: string }[] = [];
  const known = new Set(fields.map((f) => f.name));
  for (const name of Object.keys(content)) if (!known.has(name)) issues.push({ path: ['content', name], code: 'unrecognized_keys', message: 'is not a field of the form' });
  const answer: Record<string, unknown> = {};
  for (const field of fields) {
    const value = Object.hasOwn(content, field.name) ? content[field.name] : field.default;
    if (value === undefined) {
      if (field.required) issues.push({ path: ['content', field.name], code: 'invalid_type', message: 'required' });
      continue;
    }
    const wrong = problem(field, value);
    if (wrong) issues.push({ path: ['content', field.name], code: 'custom', message: wrong });
    else answer[field.name] = value;
  }
  if (issues.length > 0) throw PlatformError.invalid(issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), issues);
  return answer;
}
