import { afterAll, describe, expect, it } from 'vitest';
import { isPlatformError } from '../src/errors.js';
import { worstTick } from '../src/testing/event-loop.js';
import { SchemaValidator } from '../src/tools/schema-validator.js';

const validator = new SchemaValidator({ timeoutMs: 1000 });
afterAll(() => validator.close());

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPlatformError(error), String(error)).toBe(true);
  return error as { code: string; message: string };
};

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('SchemaValidator', () => {
  it('checks arguments and names each offending one', async () => {
    const schema = object({ city: { type: 'string' }, n: { type: 'number' } }, { required: ['city'] });
    await validator.compile('u', schema);
    expect(await validator.check('u', schema, { city: 'Oslo' }, 'args')).toEqual([]);
    expect(await validator.check('u', schema, { n: 'x' }, 'args')).toEqual(["args must have required property 'city'", 'args.n must be number']);
  });

  it('names the problem of an invalid schema', async () => {
    expect((await failure(validator.compile('u', object({ a: { type: 'nonsense' } })))).message).toMatch(/^parameters: not a valid JSON Schema/);
  });

  it('runs patterns in linear time: the ReDoS pattern answers at once and the event loop stays free', async () => {
    const schema = object({ s: { type: 'string', pattern: '^(a+)+$' } });
    await validator.compile('u', schema);
    expect(await validator.check('u', schema, { s: `${'a'.repeat(5000)}!` }, 'args')).toEqual(['args.s must match pattern "^(a+)+$"']);
    expect(await validator.check('u', schema, { s: 'aaaa' }, 'args')).toEqual([]);
    // The check of 5,000 characters against that of 2 (which no engine backtracks on), best of
    // three each so one scheduler blip is not the check. Linear is about 1 (the worker's round
    // trip); backtracking runs into the 1 s time limit. The event loop waits at most that long.
    const ms = async (s: string) => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        expect((await validator.check('u', schema, { s }, 'args')).length).toBe(1);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const short = await ms('a!');
    const long = await ms(`${'a'.repeat(5000)}!`);
    expect(long / Math.max(short, 10)).toBeLessThan(10);
    // ECMAScript escapes RE2 writes differently still work.
    const unicode = object({ s: { type: 'string', pattern: '^[\\u0041-\\u005A]+$' } });
    expect(await validator.check('u', unicode, { s: 'ABC' }, 'args')).toEqual([]);
    expect(await validator.check('u', unicode, { s: 'abc' }, 'args')).toHaveLength(1);
  });

  it('refuses at compile the patterns RE2 cannot run, naming them, in pattern, patternProperties and propertyNames', async () => {
    for (const schema of [
      object({ s: { type: 'string', pattern: '^(?=a)a$' } }),
      object({}, { patternProperties: { '(a)\\1': { type: 'string' } } }),
      // A subschema that accepts anything: ajv would never compile its pattern.
      object({}, { patternProperties: { '(a)\\1': {} } }),
      object({ list: { type: 'array', items: { anyOf: [{ $ref: '#/$defs/x' }] } } }, { $defs: { x: { type: 'string', pattern: '\\1' } } }),
      object({}, { propertyNames: { pattern: '^(?!x)' } }),
    ]) {
      const error = await failure(validator.compile('u', schema));
      expect(error.code).toBe('invalid_request');
      expect(error.message).toMatch(/^parameters: .*pattern "[^"]+" is not supported/);
    }
    // Data that looks like a schema is not one.
    await validator.compile('u', object({ a: { const: { pattern: '(?=x)' } } }));
  });

  it('checks uniqueItems in linear time, with JSON equality (key order does not matter)', async () => {
    const schema = object({ list: { type: 'array', uniqueItems: true } });
    // ajv's own uniqueItems compares every pair: 68.7 s for 60,000 arrays.
    const list = Array.from({ length: 60_000 }, (_, i) => [i]);
    expect(await validator.check('u', schema, { list }, 'args')).toEqual([]);
    // 4x the items, well under 16x the time (linear is 4, pairwise 16; the worker's garbage
    // collection makes small sizes noisy: hence the floor of 20 ms); the best of three runs each.
    const ms = async (items: number[][]) => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        expect(await validator.check('u', schema, { list: items }, 'args')).toEqual([]);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const quarter = await ms(list.slice(0, 15_000));
    const whole = await ms(list);
    expect(whole / Math.max(quarter, 20)).toBeLessThan(8);
    const duplicated = [...list, [59_999]];
    expect((await validator.check('u', schema, { list: duplicated }, 'args'))[0]).toMatch(/args\.list must NOT have duplicate items \(items ## 59999 and 60000/);
    expect(
      await validator.check(
        'u',
        schema,
        {
          list: [
            { a: 1, b: 2 },
            { b: 2, a: 1 },
          ],
        },
        'args',
      ),
    ).toHaveLength(1);
  });

  it('cuts an exponential schema at the time limit, keeps the event loop free, and works again after', async () => {
    // 40 levels of anyOf over two references to the next level: 2^40 paths on one failing value.
    const defs: Record<string, unknown> = { d40: { type: 'string', pattern: '^x$' } };
    for (let i = 39; i >= 0; i--) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    const schema = object({ v: { $ref: '#/$defs/d0' } }, { $defs: defs });
    const started = performance.now();
    const { value, worst } = await worstTick(() => failure(validator.check('u', schema, { v: 'y' }, 'Invalid arguments for tool t')));
    const took = performance.now() - started;
    expect(value.message).toBe('Invalid arguments for tool t: validation took longer than 1000 ms');
    // The event loop never waited a quarter of the check's own time: checked on this thread, the
    // wait would be all of it.
    expect(worst).toBeLessThan(took / 4);
    expect(await validator.check('u', object({ a: { type: 'number' } }), { a: 1 }, 'args')).toEqual([]);
  });

  it('answers a schema that recurses without consuming the value with an error, not a crash', async () => {
    const error = await failure(validator.check('u', { $ref: '#' }, {}, 'args'));
    expect(error.code).toBe('invalid_request');
  });

  it('refuses arguments and schemas nested deeper than the limit, without recursing into them', async () => {
    let args: unknown = 1;
    for (let i = 0; i < 5000; i++) args = { a: args };
    expect((await failure(validator.check('u', object({}), args, 'Invalid arguments for tool t'))).message).toBe('Invalid arguments for tool t: nested deeper than 64 levels');
    let schema: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 50_000; i++) schema = { type: 'object', properties: { a: schema } };
    expect((await failure(validator.compile('u', schema))).message).toBe('parameters: nested deeper than 64 levels');
  });

  it('refuses a schema larger than the limit', async () => {
    const properties = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect((await failure(validator.compile('u', object(properties)))).message).toMatch(/^parameters: larger than 262144 characters/);
  });
});
