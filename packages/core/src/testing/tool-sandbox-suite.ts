import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_LIMITS } from '../tools/limits.js';
import type { ToolLanguage, ToolOutcome, ToolSandbox } from '../tools/sandbox.js';
import { worstTick } from './event-loop.js';
import { describeToolAbort } from './tool-sandbox-abort.js';
import { describeToolProgress } from './tool-sandbox-progress.js';

/** The programs the suite runs, per language. */
const PROGRAMS: Record<ToolLanguage, Record<string, string>> = {
  javascript: {
    add: 'async function main(args) { console.log("adding", args.a, args.b); return { sum: args.a + args.b }; }',
    sync: 'function main(args) { return [args.x, "ok"]; }',
    throws: 'function main() { throw new Error("no such city"); }',
    loop: 'function main() { while (true) {} }',
    asyncLoop: 'async function main() { await null; for (;;) {} }',
    bomb: 'function main() { const a = []; for (;;) a.push("x".repeat(1e5)); }',
    process: 'function main() { return typeof process === "undefined" ? "absent" : Object.keys(process.env); }',
    require: 'function main() { return typeof require === "undefined" ? "absent" : require("fs").readFileSync("/etc/passwd", "utf8"); }',
    importFs: 'async function main() { const fs = await import("node:fs"); return fs.readFileSync("/etc/passwd", "utf8"); }',
    fetch: 'async function main() { return typeof fetch === "undefined" ? "absent" : await (await fetch("http://127.0.0.1:1")).text(); }',
    globals:
      'function main() { return Object.getOwnPropertyNames(globalThis).filter((k) => /^(process|require|module|Buffer|fetch|XMLHttpRequest|WebSocket|setTimeout|setInterval|Deno|Bun|std|os)$/.test(k)); }',
    invalidResult: 'function main() { const a = {}; a.self = a; return a; }',
    syntax: 'function main( { return 1 }',
    noMain: 'const x = 1;',
    undefinedResult: 'function main() {}',
    state: 'function main() { globalThis.count = (globalThis.count || 0) + 1; return globalThis.count; }',
    bigResult: 'function main(args) { return "x".repeat(args.chars); }',
    deepResult: 'function main(args) { let v = 1; for (let i = 0; i < args.depth; i++) v = [v]; return v; }',
    chatty: 'function main() { console.log("z".repeat(20000)); for (let i = 0; i < 1500; i++) console.log("y".repeat(300)); return 1; }',
    // The column counts characters, not bytes ("é" is two in UTF-8).
    unparsable: 'function main(args) {\n  return "héllo" + ;\n}',
    // Parses; would never end (or throw) if it were run.
    endlessIfRun: 'for (;;) {}\nthrow new Error("ran");\nfunction main() {}',
  },
  python: {
    add: 'def main(args):\n    print("adding", args["a"], args["b"])\n    return {"sum": args["a"] + args["b"]}',
    sync: 'def main(args):\n    return [args["x"], "ok"]',
    throws: 'def main(args):\n    raise ValueError("no such city")',
    loop: 'def main(args):\n    while True:\n        pass',
    asyncLoop: 'async def main(args):\n    while True:\n        pass',
    bomb: 'def main(args):\n    a = []\n    while True:\n        a.append("x" * 100000)',
    // Pyodide has an os.environ of its own (USER, HOME, ...): it must not be the server's.
    process: 'import os\ndef main(args):\n    return "absent" if "TOOL_SUITE_SECRET" not in os.environ else dict(os.environ)',
    require: 'def main(args):\n    return open("/etc/passwd").read()',
    importFs: 'import subprocess\ndef main(args):\n    return subprocess.run(["id"], capture_output=True).stdout.decode()',
    fetch: 'import urllib.request\ndef main(args):\n    return urllib.request.urlopen("http://127.0.0.1:1").read().decode()',
    globals: 'import js\ndef main(args):\n    return [k for k in ("process", "require", "module", "Buffer", "fetch", "XMLHttpRequest", "WebSocket", "setTimeout") if hasattr(js, k)]',
    invalidResult: 'def main(args):\n    return object()',
    syntax: 'def main(args) return 1',
    noMain: 'x = 1',
    undefinedResult: 'def main(args):\n    pass',
    state: 'import builtins\ndef main(args):\n    builtins.count = getattr(builtins, "count", 0) + 1\n    return builtins.count',
    bigResult: 'def main(args):\n    return "x" * args["chars"]',
    deepResult: 'def main(args):\n    v = 1\n    for i in range(args["depth"]):\n        v = [v]\n    return v',
    chatty: 'def main(args):\n    print("z" * 20000)\n    for i in range(1500):\n        print("y" * 300)\n    return 1',
    unparsable: 'def main(args):\n    return "héllo" + (\n',
    endlessIfRun: 'while True:\n    pass\nraise SystemExit(3)\ndef main(args):\n    pass',
  },
};

/** Where `unparsable` stops parsing, per language, and what the parser says. */
const SYNTAX_ERRORS: Record<ToolLanguage, { line: number; column: number; message: RegExp }> = {
  javascript: { line: 2, column: 20, message: /^SyntaxError: unexpected token in expression: ';'/ },
  python: { line: 2, column: 22, message: /^SyntaxError: '\(' was never closed/ },
};

export interface ToolSandboxSuiteOptions {
  create(): ToolSandbox | Promise<ToolSandbox>;
  readonly language: ToolLanguage;
  /** Limits used by the suite. Defaults: 1000 ms, 32 MiB. */
  readonly timeoutMs?: number;
  readonly memoryBytes?: number;
}

/** The behaviour every `ToolSandbox` must have, escape attempts included. */
export function describeToolSandbox(name: string, options: ToolSandboxSuiteOptions): void {
  describe(`ToolSandbox conformance: ${name}`, () => {
    let sandbox: ToolSandbox;
    const programs = PROGRAMS[options.language];
    const timeoutMs = options.timeoutMs ?? 1000;
    const memoryBytes = options.memoryBytes ?? 32 * 1024 * 1024;
    const run = (program: keyof typeof programs, args: unknown = {}, owner?: string) => sandbox.run({ code: programs[program] as string, args, timeoutMs, memoryBytes, ...(owner ? { owner } : {}) });
    const failed = (outcome: ToolOutcome) => (outcome.ok ? undefined : outcome.error);
    // A secret the server process holds: it must never show up in a tool's output.
    const SECRET = 'TOOL-SUITE-SECRET-VALUE-7d1f';

    beforeAll(async () => {
      process.env.TOOL_SUITE_SECRET = SECRET;
      sandbox = await options.create();
    });
    afterAll(async () => {
      delete process.env.TOOL_SUITE_SECRET;
      await sandbox.close();
    });

    it('runs main with the arguments and returns its JSON result and captured logs', async () => {
      const outcome = await run('add', { a: 2, b: 40 });
      expect(outcome).toMatchObject({ ok: true, result: { sum: 42 }, logs: ['adding 2 40'] });
      expect(await run('sync', { x: 7 })).toMatchObject({ ok: true, result: [7, 'ok'] });
      expect(await run('undefinedResult')).toMatchObject({ ok: true, result: null });
    });

    it('checkSyntax names the line and column where code stops parsing, and never runs code', async (ctx) => {
      if (!sandbox.checkSyntax) return ctx.skip();
      const check = (program: keyof typeof programs, owner = 'checker') => sandbox.checkSyntax?.({ code: programs[program] as string, dependencies: [], timeoutMs, memoryBytes, owner });
      const expected = SYNTAX_ERRORS[options.language];
      expect(await check('unparsable')).toEqual({ line: expected.line, column: expected.column, message: expect.stringMatching(expected.message) });
      // Run, this code would never end (the check would fail at the time limit): parsed, it is fine.
      expect(await check('endlessIfRun')).toBeUndefined();
      expect(await check('add')).toBeUndefined();
      expect(failed(await run('unparsable'))?.kind).toMatch(/invalid_code|thrown/);
    });

    it('reports thrown errors, bad code, a missing main and results that are not JSON', async () => {
      expect(failed(await run('throws'))).toMatchObject({ kind: 'thrown', message: expect.stringContaining('no such city') });
      expect(failed(await run('syntax'))?.kind).toMatch(/invalid_code|thrown/);
      expect(failed(await run('noMain'))?.message).toMatch(/main/);
      expect(failed(await run('invalidResult'))?.kind).toMatch(/invalid_result|thrown/);
    });

    it('stops endless loops within the time limit', async () => {
      for (const program of ['loop', 'asyncLoop'] as const) {
        const outcome = await run(program);
        expect(failed(outcome)?.kind, program).toBe('timeout');
        // From when the sandbox started the run (waiting for a free interpreter is not counted).
        expect(outcome.durationMs, program).toBeLessThan(timeoutMs + 3000);
      }
      expect(await run('sync', { x: 1 })).toMatchObject({ ok: true });
    });

    it('stops a memory bomb', async () => {
      const outcome = await run('bomb');
      expect(failed(outcome)?.kind).toMatch(/out_of_memory|timeout/);
      expect(await run('sync', { x: 1 })).toMatchObject({ ok: true });
    });

    it('gives no access to the process, modules, files or the network, and never the environment', async () => {
      for (const program of ['process', 'require', 'importFs', 'fetch'] as const) {
        const outcome = await run(program);
        const text = JSON.stringify(outcome);
        expect(text, program).not.toContain(SECRET);
        expect(text, program).not.toContain('root:x:0:0');
        if (outcome.ok) expect(outcome.result, program).toBe('absent');
      }
      const globals = await run('globals');
      expect(globals).toMatchObject({ ok: true, result: [] });
    });

    it("never lets one owner's code see state another owner's code left behind", async () => {
      for (let i = 0; i < 3; i++) expect(await run('state', {}, 'owner-a')).toMatchObject({ ok: true });
      expect(await run('state', {}, 'owner-b')).toMatchObject({ ok: true, result: 1 });
      expect(await run('state', {}, 'owner-c')).toMatchObject({ ok: true, result: 1 });
    });

    it('refuses results over the size limit and nested deeper than the depth limit, naming the limit', async () => {
      const big = failed(await run('bigResult', { chars: TOOL_LIMITS.maxResultChars + 1 }));
      expect(big).toEqual({ kind: 'invalid_result', message: `the result of main is larger than ${TOOL_LIMITS.maxResultChars} characters` });
      expect(await run('bigResult', { chars: 1000 })).toMatchObject({ ok: true, result: 'x'.repeat(1000) });
      for (const depth of [TOOL_LIMITS.maxDepth, TOOL_LIMITS.maxDepth + 1, 3000]) {
        const outcome = await run('deepResult', { depth });
        if (depth <= TOOL_LIMITS.maxDepth) expect(outcome.ok, String(depth)).toBe(true);
        else expect(failed(outcome), String(depth)).toEqual({ kind: 'invalid_result', message: `the result of main is nested deeper than ${TOOL_LIMITS.maxDepth} levels` });
      }
    });

    it('caps captured logs: lines, line length and total', async () => {
      // What is measured is the log, not the time or the memory: longer limits so that a loaded
      // machine (1,500 prints through Pyodide's stdout hook) does not turn it into a timeout,
      // nor the host's garbage of those strings, collected late, into out_of_memory (a Python
      // run in CI failed in 254 ms, ok: false, once in three full runs).
      const outcome = await sandbox.run({ code: programs.chatty as string, args: {}, timeoutMs: Math.max(timeoutMs, 10_000), memoryBytes: Math.max(memoryBytes, 256 * 1024 * 1024) });
      expect(outcome, JSON.stringify(outcome.ok ? undefined : outcome.error)).toMatchObject({ ok: true });
      expect(outcome.logs[0]).toBe('z'.repeat(TOOL_LIMITS.maxLogLineChars));
      expect(outcome.logs.length).toBeGreaterThan(100);
      expect(outcome.logs.length).toBeLessThanOrEqual(TOOL_LIMITS.maxLogLines);
      expect(Math.max(...outcome.logs.map((l) => l.length))).toBeLessThanOrEqual(TOOL_LIMITS.maxLogLineChars);
      expect(outcome.logs.join('').length).toBeLessThanOrEqual(TOOL_LIMITS.maxLogChars + TOOL_LIMITS.maxLogLineChars);
    });

    it('refuses arguments nested deeper than the depth limit with invalid_request', async () => {
      let args: unknown = 1;
      for (let i = 0; i < 5000; i++) args = [args];
      await expect(sandbox.run({ code: programs.sync as string, args: { x: args }, timeoutMs, memoryBytes })).rejects.toMatchObject({
        code: 'invalid_request',
        message: `args: nested deeper than ${TOOL_LIMITS.maxDepth} levels`,
      });
    });

    describeToolProgress(() => sandbox, options.language, { timeoutMs, memoryBytes });

    describeToolAbort(() => sandbox, options.language, { timeoutMs, memoryBytes });

    it('runs 50 tools in parallel while the event loop stays free', async () => {
      // Interpreters restarted by the earlier cases finish starting first (a start is CPU work of
      // another process or thread, not of this event loop, but it competes for the same cores).
      await Promise.all([run('sync', { x: 0 }), run('sync', { x: 0 }), run('sync', { x: 0 })]);
      const { value: outcomes, worst } = await worstTick(() => Promise.all(Array.from({ length: 50 }, (_, i) => run('add', { a: i, b: 1 }))));
      expect(outcomes.map((o) => (o.ok ? (o.result as { sum: number }).sum : -1))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(worst).toBeLessThan(100);
    });
  });
}
