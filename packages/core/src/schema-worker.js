// Worker thread that compiles tools' `parameters` JSON Schemas and checks arguments against
// them (schema-validator.ts sends the work and terminates this thread when it overruns its time
// limit). Plain JavaScript so Node runs it from the sources and from dist alike.
//
// Every regular expression of a schema (`pattern`, `patternProperties`, `propertyNames`'
// pattern) runs on RE2 (re2js: linear time, no backtracking); a pattern RE2 cannot compile
// (lookaround, backreferences) is refused when the schema is compiled. `uniqueItems` compares
// canonical JSON (sorted keys) in a Set: linear, where ajv's own is quadratic for objects and
// arrays.
//
// Protocol: first { ready: true } from here once loaded; then { id, op: 'compile', schema } or
// { id, op: 'validate', schema, args }, both `schema` (the cache key) and `args` JSON text.
// Answers { id, ok: true, problems?: string[] } or { id, ok: false, phase, message }.
import { parentPort } from 'node:worker_threads';
import { Ajv } from 'ajv';
import { RE2JS } from 're2js';

/** How many problems a failed check reports, at most (allErrors can find thousands). */
const MAX_PROBLEMS = 20;
const MAX_VALIDATORS = 1000;

/** `\uXXXX` and `\u{X...}` (ECMAScript) as RE2's `\x{X...}`; everything else as written. */
function toRe2Syntax(pattern) {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const rest = pattern.slice(i + 1);
    const fixed = /^u([0-9a-fA-F]{4})/.exec(rest) ?? /^u\{([0-9a-fA-F]{1,6})\}/.exec(rest);
    if (fixed) {
      out += `\\x{${fixed[1]}}`;
      i += fixed[0].length;
    } else {
      out += c + (pattern[i + 1] ?? '');
      i++;
    }
  }
  return out;
}

/** ajv's `code.regExp`: an RE2 pattern with RegExp's `test`, or an error naming the pattern. */
function re2(pattern) {
  let compiled;
  try {
    compiled = RE2JS.compile(toRe2Syntax(pattern));
  } catch (error) {
    throw new Error(`pattern ${JSON.stringify(pattern)} is not supported (patterns run on RE2, without lookaround or backreferences): ${error?.message ?? error}`);
  }
  // ajv keys compiled patterns by toString(): each pattern needs its own.
  return { test: (text) => compiled.test(text), toString: () => `re2:${pattern}` };
}
re2.code = 're2js';

/** Keywords whose value is a schema, an array of schemas, or an object of schemas. */
const SCHEMA = ['additionalProperties', 'additionalItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties', 'items'];
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];

/**
 * Compiles every pattern of a schema with RE2 (throwing for the first it cannot run), also
 * those ajv would leave out because their subschema accepts anything: the rule at save is one
 * for every pattern. Walks schema positions only (not `const`, `enum`, `default` data), without
 * recursion.
 */
function checkPatterns(root) {
  const stack = [root];
  while (stack.length > 0) {
    const schema = stack.pop();
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) continue;
    if (typeof schema.pattern === 'string') re2(schema.pattern);
    if (schema.patternProperties && typeof schema.patternProperties === 'object') for (const pattern of Object.keys(schema.patternProperties)) re2(pattern);
    for (const key of SCHEMA) if (key in schema) stack.push(schema[key]);
    for (const key of SCHEMA_ARRAYS) if (Array.isArray(schema[key])) stack.push(...schema[key]);
    for (const key of SCHEMA_MAPS) if (schema[key] && typeof schema[key] === 'object') stack.push(...Object.values(schema[key]));
  }
}

/** Canonical JSON: object keys sorted, so equal JSON values (JSON Schema equality) give equal text. */
function canonical(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  let out;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonical(value[i]);
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:${canonical(value[keys[i]])}`;
  return `${out}}`;
}

function uniqueItems(unique, items) {
  if (!unique || !Array.isArray(items)) return true;
  const seen = new Map();
  for (let i = 0; i < items.length; i++) {
    const key = canonical(items[i]);
    const first = seen.get(key);
    if (first !== undefined) {
      uniqueItems.errors = [{ keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${first} and ${i} are identical)`, params: { i, j: first } }];
      return false;
    }
    seen.set(key, i);
  }
  return true;
}

const ajv = new Ajv({ allErrors: true, strict: false, logger: false, code: { regExp: re2 } });
ajv.removeKeyword('uniqueItems');
ajv.addKeyword({ keyword: 'uniqueItems', schemaType: 'boolean', validate: uniqueItems, errors: true });

/** Compiled validators by schema text, least recently used first out. */
const validators = new Map();

function compile(text) {
  let validate = validators.get(text);
  if (validate) {
    validators.delete(text);
  } else {
    try {
      const schema = JSON.parse(text);
      checkPatterns(schema);
      validate = ajv.compile(schema);
    } finally {
      // ajv keeps every compiled schema (and its $id) too: drop them, this map is the cache.
      ajv.removeSchema();
    }
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value);
  }
  validators.set(text, validate);
  return validate;
}

function problemsOf(validate, args) {
  if (validate(args)) return [];
  return (validate.errors ?? []).slice(0, MAX_PROBLEMS).map((e) => `${e.instancePath ? `args${e.instancePath.replaceAll('/', '.')}` : 'args'} ${e.message ?? 'is invalid'}`);
}

// Loading ajv and re2js takes a while on a busy machine: the parent starts its clock after this.
parentPort.postMessage({ ready: true });

parentPort.on('message', (request) => {
  let validate;
  try {
    validate = compile(request.schema);
  } catch (error) {
    parentPort.postMessage({ id: request.id, ok: false, phase: 'compile', message: String(error?.message ?? error) });
    return;
  }
  if (request.op === 'compile') {
    parentPort.postMessage({ id: request.id, ok: true });
    return;
  }
  try {
    parentPort.postMessage({ id: request.id, ok: true, problems: problemsOf(validate, JSON.parse(request.args)) });
  } catch (error) {
    // e.g. a schema whose $ref recursion never consumes the value: the stack runs out.
    parentPort.postMessage({ id: request.id, ok: false, phase: 'validate', message: String(error?.message ?? error) });
  }
});
