import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createIdGenerator, createRandomCharacters, hasIdForm, randomString } from '../src/ids.js';

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

  it('draw their random characters from a pool refilled a block at a time, zeroing what they used', () => {
    // One system call per id held the main thread ~60 ms per 8,000 chunk ids.
    const fills: Buffer[] = [];
    const chars = createRandomCharacters((buffer) => {
      fills.push(buffer);
      for (let i = 0; i < buffer.length; i++) buffer[i] = (i * 7 + fills.length) % 256;
    }, 1024);
    const made = Array.from({ length: 1000 }, () => chars(10));
    for (const s of made) expect(s).toMatch(/^[0-9a-z]{10}$/);
    // 10,000 characters from 1,024-byte blocks (a few bytes of each are rejected): about 10 fills, not 1,000.
    expect(fills.length).toBeGreaterThanOrEqual(10);
    expect(fills.length).toBeLessThanOrEqual(11);
    const pool = fills[0] as Buffer;
    const used = (10_000 - 9 * 1024) % 1024; // bytes of the last block taken so far, at least
    expect(pool.subarray(0, used).every((b) => b === 0)).toBe(true);
  });

  it('are uniformly spread over the 36 characters', () => {
    const counts = new Map<string, number>();
    for (const c of randomString(36_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(36);
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(200);
  });
});
