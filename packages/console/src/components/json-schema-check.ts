/** A JSON Schema as the API's contract writes them (what the service's zod schemas become). */
export type JsonSchema = { readonly [keyword: string]: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
const fits = (v: unknown, type: string) => typeOf(v) === type || (type === 'number' && typeOf(v) === 'integer');
const shown = (v: unknown) => JSON.stringify(v);
const at = (path: string, key: string | number) => `${path}.${key}`;

/**
 * The problems of `value` against `schema`, each `path: reason` (the service words its 400s the
 * same way): the keywords the contract's schemas use — `type`, `enum`, `const`, bounds of numbers,
 * strings and arrays, `items`, `properties`, `required`, `additionalProperties` and `oneOf` /
 * `anyOf` (a union of objects told apart by a `const` member is checked as the variant that
 * member names). Other keywords are left to the service, which checks everything again.
 */
export function schemaProblems(value: unknown, schema: JsonSchema, path: string): string[] {
  const union = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(union)) {
    const results = union.map((s) => schemaProblems(value, s, path));
    if (results.some((r) => r.length === 0)) return [];
    // The variant whose `const` members the value has (a discriminated union), else the closest.
    const chosen = union.findIndex((s) => Object.entries((s.properties ?? {}) as Record<string, JsonSchema>).some(([k, p]) => p.const !== undefined && isObject(value) && value[k] === p.const));
    if (chosen >= 0) return results[chosen] as string[];
    const consts = union.flatMap((s) => Object.entries((s.properties ?? {}) as Record<string, JsonSchema>).filter(([, p]) => p.const !== undefined));
    if (consts.length === union.length && isObject(value)) {
      const key = consts[0]?.[0] as string;
      return [`${at(path, key)}: must be one of ${consts.map(([, p]) => shown(p.const)).join(', ')}`];
    }
    return [`${path}: does not match any of the allowed forms`];
  }
  const type = schema.type as string | undefined;
  if (type && !fits(value, type)) return [`${path}: must be ${type === 'integer' ? 'an integer' : type === 'object' || type === 'array' ? `an ${type}` : `a ${type}`}, not ${typeOf(value)}`];
  if (schema.const !== undefined && value !== schema.const) return [`${path}: must be ${shown(schema.const)}`];
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return [`${path}: must be one of ${schema.enum.map(shown).join(', ')}`];
  const problems: string[] = [];
  const bound = (ok: boolean, text: string) => ok || problems.push(`${path}: ${text}`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number') bound(value >= schema.minimum, `at least ${schema.minimum}`);
    if (typeof schema.maximum === 'number') bound(value <= schema.maximum, `at most ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number') bound(value > schema.exclusiveMinimum, `more than ${schema.exclusiveMinimum}`);
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number') bound(value.length >= schema.minLength, `at least ${schema.minLength} character${schema.minLength === 1 ? '' : 's'}`);
    if (typeof schema.maxLength === 'number') bound(value.length <= schema.maxLength, `at most ${schema.maxLength} characters`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number') bound(value.length <= schema.maxItems, `at most ${schema.maxItems} items`);
    const items = schema.items;
    if (isObject(items)) for (const [i, item] of value.entries()) problems.push(...schemaProblems(item, items, at(path, i)));
  }
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const key of (schema.required ?? []) as string[]) if (value[key] === undefined) problems.push(`${at(path, key)}: required`);
    for (const [key, member] of Object.entries(value)) {
      const own = properties[key];
      if (own) problems.push(...schemaProblems(member, own, at(path, key)));
      else if (schema.additionalProperties === false) {
        const known = Object.keys(properties);
        problems.push(`${path}: "${key}" is not an option here (${known.length ? `it takes ${known.join(', ')}` : 'it takes none'})`);
      } else if (isObject(schema.additionalProperties)) problems.push(...schemaProblems(member, schema.additionalProperties, at(path, key)));
    }
  }
  return problems;
}
