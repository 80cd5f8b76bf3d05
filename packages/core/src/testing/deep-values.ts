/** How the levels of a deep value are made: all arrays, all objects, or objects and arrays in turn. */
export type NestingShape = 'arrays' | 'objects' | 'mixed';

const isArrayLevel = (shape: NestingShape, level: number) => shape === 'arrays' || (shape === 'mixed' && level % 2 === 0);

/**
 * A value nested `depth` levels of objects and arrays (`{ a: { a: {} } }` for 3 `objects`,
 * `mixed` starts with an object), built in a loop: for tests of code that must not recurse over
 * what a client sends (see `MAX_NESTING_DEPTH`).
 * @example deepValue(100_000, 'objects') // refused by parseInput: nested deeper than 64 levels
 */
export function deepValue(depth: number, shape: NestingShape = 'objects'): unknown {
  const root: unknown = isArrayLevel(shape, 1) ? [] : {};
  let at = root;
  for (let level = 2; level <= depth; level++) {
    const next: unknown = isArrayLevel(shape, level) ? [] : {};
    if (Array.isArray(at)) at.push(next);
    else (at as Record<string, unknown>).a = next;
    at = next;
  }
  return root;
}

/**
 * The JSON text of `deepValue(depth, shape)`, built as text (`JSON.stringify` of it would
 * overflow the stack past a few thousand levels).
 * @example deepJson(3, 'mixed') // '{"a":[{}]}'
 */
export function deepJson(depth: number, shape: NestingShape = 'objects'): string {
  const opens: string[] = [];
  const closes: string[] = [];
  for (let level = 1; level < depth; level++) {
    opens.push(isArrayLevel(shape, level) ? '[' : '{"a":');
    closes.push(isArrayLevel(shape, level) ? ']' : '}');
  }
  return `${opens.join('')}${isArrayLevel(shape, depth) ? '[]' : '{}'}${closes.reverse().join('')}`;
}
