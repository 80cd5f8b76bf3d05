import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createIdGenerator, hasIdForm } from '../src/ids.js';

// Ids made by several instances (here: processes) must be unique and sort by creation time, so
// lists ordered by id agree with creation order whichever instance made each row.

const run = promisify(execFile);

/** Runs `script` in another Node process with `createIdGenerator` from the built package (Node 20 cannot import the TypeScript source); its stdout lines. */
async function idsFromProcess(script: string): Promise<string[]> {
  const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `import { createIdGenerator } from ${JSON.stringify(dist)};\n${script}`]);
  return stdout.trim().split('\n');
}

describe('ids', () => {
  it('have the prefix of their kind and letters and digits after it', () => {
    const ids = createIdGenerator();
    const id = ids.next('project');
    expect(id).toMatch(/^proj_[0-9a-z]{22}$/);
    expect(hasIdForm('project', id)).toBe(true);
  });

  it('made in two processes interleave in time order and never collide', async () => {
    // Each process makes an id every 30 ms, the second 15 ms after the first, and prints when
    // (the machine's one clock). Sorted by id, the ids of both must come in the order of those times.
    const base = Date.now() + 1500;
    const script = (delay: number) => `
      const ids = createIdGenerator();
      const out = [];
      for (let i = 0; i < 8; i++) {
        while (Date.now() < ${base} + ${delay} + i * 30) {}
        const at = Date.now();
        out.push(ids.next('document') + ' ' + at);
      }
      console.log(out.join('\\n'));`;
    const [first, second] = await Promise.all([idsFromProcess(script(0)), idsFromProcess(script(15))]);
    const all = [...first, ...second].map((line) => {
      const [id, at] = line.split(' ');
      return { id: id as string, at: Number(at) };
    });
    const byId = [...all].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(byId.map((x) => x.at)).toEqual(all.map((x) => x.at).sort((a, b) => a - b));
    // Many ids at once in two processes: no id twice.
    const many = `const ids = createIdGenerator(); const out = []; for (let i = 0; i < 20000; i++) out.push(ids.next('chunk')); console.log(out.join('\\n'));`;
    const [a, b] = await Promise.all([idsFromProcess(many), idsFromProcess(many)]);
    expect(new Set([...a, ...b]).size).toBe(40000);
  }, 60_000);
});
