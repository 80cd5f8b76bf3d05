import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolProgress } from '@agent-platform/core';
import { TOOL_LIMITS } from '@agent-platform/core/internal';
import { describeToolSandbox } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PythonSandbox, pythonSandbox } from '../src/python.js';
import { pyodideDir } from '../src/python-host.js';
import { chooseIsolation } from '../src/python-isolation.js';
import { PythonPackageIndex } from '../src/python-packages.js';

describeToolSandbox('Python (Pyodide in confined processes)', { language: 'python', create: () => pythonSandbox({ workers: 2 }) });

const LIMITS = { timeoutMs: 3000, memoryBytes: 64 * 1024 * 1024 };
const SECRET = 'PYTHON-SANDBOX-SECRET-3b9e';

/** Python that reaches the JavaScript of its host process and tries everything from there. */
const ESCAPES = `
from pyodide.ffi import to_js
import pyodide_js
F = to_js([]).constructor.constructor

async def attempt(source):
    try:
        return str(await F(source)())
    except BaseException as error:
        return "refused: " + str(error)[:200]

async def main(args):
    port = args["port"]
    pid = args["pid"]
    out = {}
    out["env"] = await attempt("return Promise.resolve(JSON.stringify(process.env))")
    out["passwd"] = await attempt("return import('node:fs').then(fs => fs.readFileSync('/etc/passwd', 'utf8'))")
    out["secretKey"] = await attempt("return import('node:fs').then(fs => fs.readdirSync('/'))")
    out["write"] = await attempt("return import('node:fs').then(fs => { fs.writeFileSync('/tmp/py-escape-marker', 'x'); return 'written'; })")
    out["spawn"] = await attempt("return import('node:child_process').then(cp => cp.execSync('id').toString())")
    out["tcp"] = await attempt("return import('node:net').then(net => new Promise((ok, no) => { const s = net.connect(" + str(port) + ", '127.0.0.1'); s.on('connect', () => ok('CONNECTED')); s.on('error', no); }))")
    out["fetch"] = await attempt("return fetch('http://127.0.0.1:" + str(port) + "/').then(r => 'FETCHED')")
    out["http"] = await attempt("return import('node:http').then(http => new Promise((ok, no) => http.get('http://127.0.0.1:" + str(port) + "/', () => ok('FETCHED')).on('error', no)))")
    out["kill"] = await attempt("return Promise.resolve(process.kill(" + str(pid) + ", 0))")
    out["binding"] = await attempt("return Promise.resolve(Object.keys(process.binding('tcp_wrap')))")
    out["worker"] = await attempt("return import('node:worker_threads').then(w => { new w.Worker('1', { eval: true }); return 'WORKER'; })")
    try:
        pyodide_js.FS.mkdir("/host")
        pyodide_js.FS.mount(pyodide_js.FS.filesystems.NODEFS, to_js({"root": "/etc"}), "/host")
        out["nodefs"] = open("/host/passwd").read()
    except BaseException as error:
        out["nodefs"] = "refused: " + str(error)[:200]
    return out
`;

// Each layer on its own: the namespaces without the in-process guards, the guards without namespaces.
describe.each([
  ['namespaces', false],
  ['process', true],
] as const)('Python sandbox escapes from the host JavaScript (%s isolation, guards %s)', (isolation, guards) => {
  let sandbox: PythonSandbox;
  let server: Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    process.env.PYTHON_SANDBOX_SECRET = SECRET;
    sandbox = pythonSandbox({ workers: 1, isolation, guards });
    server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    delete process.env.PYTHON_SANDBOX_SECRET;
    await sandbox.close();
    await new Promise((ok) => server.close(ok));
  });

  it('finds no environment, files, processes or network there', async () => {
    const outcome = await sandbox.run({ code: ESCAPES, args: { port, pid: process.pid }, ...LIMITS, owner: 'mallory' });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    const out = (outcome as { result: Record<string, string> }).result;
    expect(JSON.stringify(out)).not.toContain(SECRET);
    // With the guards, JavaScript cannot even be compiled in the host; without them the
    // namespaces and the empty environment answer.
    if (guards) for (const value of Object.values(out).filter((v) => v !== out.nodefs)) expect(value).toMatch(/^refused: EvalError: Code generation from strings disallowed/);
    else expect(out.env).toBe('{}');
    for (const key of ['passwd', 'secretKey', 'write', 'spawn', 'tcp', 'fetch', 'http', 'kill', 'binding', 'worker', 'nodefs']) {
      expect(out[key], key).toMatch(/^refused: /);
    }
    expect(JSON.stringify(out)).not.toContain('root:x:0:0');
    expect(connections).toBe(0);
    if (isolation === 'namespaces') expect(await sandbox.isolation()).toMatchObject({ description: expect.stringMatching(/network and PID namespaces/) });
  });
});

describe('Python sandbox', () => {
  let sandbox: PythonSandbox;
  let unguarded: PythonSandbox;
  let wheels: string;
  beforeAll(() => {
    wheels = mkdtempSync(join(tmpdir(), 'ap-wheels-'));
    // Two pure-Python wheels built here: tinycalc, and tinystats which needs tinycalc (said by the folder's lock file).
    execFileSync('python3', [
      '-c',
      `
import json, sys, zipfile
def wheel(name, files):
    path = f"{sys.argv[1]}/{name}-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for file, text in files.items():
            z.writestr(file, text)
        info = f"{name}-1.0.0.dist-info"
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0.0\\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        z.writestr(f"{info}/RECORD", "")
wheel("tinycalc", {"tinycalc/__init__.py": "def double(x):\\n    return 2 * x\\n"})
wheel("tinystats", {"tinystats/__init__.py": "from tinycalc import double\\ndef quadruple(x):\\n    return double(double(x))\\n"})
json.dump({"packages": {"tinystats": {"file_name": "tinystats-1.0.0-py3-none-any.whl", "depends": ["tinycalc"]}}}, open(f"{sys.argv[1]}/pyodide-lock.json", "w"))
`,
      wheels,
    ]);
    sandbox = pythonSandbox({ workers: 2, packageDirs: [wheels] });
    // Without the in-process guards, code can compile JavaScript in its host: what the parent
    // does when code reaches the host is tested there.
    unguarded = pythonSandbox({ workers: 1, guards: false });
  });
  afterAll(() => Promise.all([sandbox.close(), unguarded.close()]));

  it('provides declared packages from the packages folder (with their dependencies) and the standard library', async () => {
    await sandbox.prepare?.({ code: '', dependencies: ['tinystats', 'json', 'collections'] });
    const outcome = await sandbox.run({
      code: 'import tinystats, json\ndef main(args):\n    return json.loads(json.dumps({"q": tinystats.quadruple(args["x"])}))',
      args: { x: 5 },
      dependencies: ['tinystats'],
      ...LIMITS,
    });
    expect(outcome).toMatchObject({ ok: true, result: { q: 20 } });
  });

  it("has the standard library and none of Pyodide's own packages, as docs/TOOLS.md says", async () => {
    // The npm package ships the interpreter and the standard library, no wheels.
    expect(new PythonPackageIndex(pyodideDir, []).names()).toEqual([]);
    const code = `
import sys, importlib
def attempt(source):
    try:
        namespace = {}
        exec(source, namespace)
        return namespace.get("r", "ok")
    except BaseException as error:
        return type(error).__name__
def main(args):
    missing = []
    for name in sorted(sys.stdlib_module_names):
        try:
            importlib.import_module(name)
        except BaseException:
            missing.append(name)
    return {"missing": missing, "checks": {name: attempt(source) for name, source in args["checks"].items()}}
`;
    const checks = {
      sqlite3: "import sqlite3\nr = sqlite3.connect(':memory:').execute('select 6 * 7').fetchone()[0]",
      hashlib: "import hashlib\nr = hashlib.sha256(b'x').hexdigest()[:6] + hashlib.md5(b'x').hexdigest()[:6]",
      decimal: "import decimal\nr = str(decimal.Decimal('1.1') + decimal.Decimal('2.2'))",
      compression: "import zlib, lzma, bz2\nr = [len(m.decompress(m.compress(b'abc'))) for m in (zlib, lzma, bz2)]",
      statistics: 'import statistics\nr = statistics.median([3, 1, 2])',
      xml: "import xml.etree.ElementTree as ET\nr = ET.fromstring('<a><b>t</b></a>').find('b').text",
      pbkdf2: "import hashlib\nhashlib.pbkdf2_hmac('sha256', b'p', b's', 1)",
      zoneinfo: "import zoneinfo\nzoneinfo.ZoneInfo('Europe/Paris')",
      thread: 'import threading\nt = threading.Thread(target=print)\nt.start()',
      subprocess: "import subprocess\nsubprocess.run(['id'])",
      socket: "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)",
      ssl: 'import ssl\nr = ssl.OPENSSL_VERSION',
      numpy: 'import numpy',
      micropip: 'import micropip',
    };
    const outcome = await sandbox.run({ code, args: { checks }, ...LIMITS, timeoutMs: 30_000, memoryBytes: 512 * 1024 * 1024 });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    const result = (outcome as { result: { missing: string[]; checks: Record<string, unknown> } }).result;
    expect(result.checks).toEqual({
      sqlite3: 42,
      hashlib: '2d7116' + '9dd4e4',
      decimal: '3.3',
      compression: [3, 3, 3],
      statistics: 2,
      xml: 't',
      pbkdf2: 'AttributeError',
      zoneinfo: 'ZoneInfoNotFoundError',
      thread: 'RuntimeError',
      subprocess: 'OSError',
      socket: 'OSError',
      ssl: 'OpenSSL (stub)',
      numpy: 'ModuleNotFoundError',
      micropip: 'ModuleNotFoundError',
    });
    // The standard library's modules that cannot be imported (platform-specific ones, terminals,
    // GUIs, dbm databases, pip and venv): every other one can.
    expect(result.missing).toEqual([
      '_aix_support',
      '_android_support',
      '_apple_support',
      '_curses',
      '_curses_panel',
      '_dbm',
      '_gdbm',
      '_hashlib',
      '_interpchannels',
      '_interpqueues',
      '_interpreters',
      '_ios_support',
      '_multiprocessing',
      '_osx_support',
      '_overlapped',
      '_posixshmem',
      '_pydecimal',
      '_scproxy',
      '_tkinter',
      '_uuid',
      '_winapi',
      '_wmi',
      'antigravity',
      'curses',
      'dbm',
      'ensurepip',
      'grp',
      'idlelib',
      'msvcrt',
      'nt',
      'pwd',
      'pydoc_data',
      'readline',
      'resource',
      'syslog',
      'tkinter',
      'turtle',
      'turtledemo',
      'venv',
      'winreg',
      'winsound',
    ]);
  });

  it('gives a tool exactly the environment docs/TOOLS.md lists, from a snapshot or not, naming nothing of the host', async () => {
    // Emscripten added `_` (the host script's path on the server, also sys.executable) and
    // Pyodide PYTHONINSPECT.
    const code = 'import os, sys\ndef main(args):\n    return {"environ": dict(os.environ), "executable": sys.executable, "argv": sys.argv}';
    const fresh = pythonSandbox({ workers: 1, snapshots: false });
    try {
      for (const each of [sandbox, fresh]) {
        const outcome = await each.run({ code, args: {}, ...LIMITS, owner: 'environment' });
        expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
        const out = (outcome as { result: { environ: Record<string, string>; executable: string; argv: string[] } }).result;
        expect(out.environ).toEqual({
          HOME: '/home/pyodide',
          USER: 'web_user',
          LOGNAME: 'web_user',
          PATH: '/',
          PWD: '/',
          LANG: 'C.UTF-8',
          LD_LIBRARY_PATH: '/usr/lib:/lib/python3.14/site-packages',
        });
        expect(out.executable).toBe('/home/pyodide/this.program');
        expect(out.argv).toEqual(['']);
      }
    } finally {
      await fresh.close();
    }
  }, 120_000);

  it('refuses packages it cannot provide, naming them and what is available', async () => {
    await expect(sandbox.prepare?.({ code: '', dependencies: ['numpy'] })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/dependencies: python package "numpy" is not available.*available: tinycalc, tinystats/),
    });
    await expect(sandbox.prepare?.({ code: '', dependencies: ['requests==2.0'] })).rejects.toMatchObject({ message: expect.stringContaining('"requests==2.0" is not a Python package name') });
    await expect(sandbox.prepare?.({ code: '', dependencies: ['https://example.invalid/x.whl'] })).rejects.toMatchObject({ code: 'invalid_request' });
    // A run whose package vanished fails as a tool error, not a crash.
    expect(await sandbox.run({ code: 'def main(args):\n    return 1', args: {}, dependencies: ['numpy'], ...LIMITS })).toMatchObject({ ok: false, error: { kind: 'invalid_code' } });
  });

  it('caps logs and results', async () => {
    const chatty = await sandbox.run({ code: 'def main(args):\n    for i in range(5000):\n        print("line", i)\n    return "done"', args: {}, ...LIMITS });
    expect(chatty).toMatchObject({ ok: true, result: 'done' });
    expect(chatty.logs.length).toBe(1000);
    const huge = await sandbox.run({ code: 'def main(args):\n    return "x" * 2000000', args: {}, ...LIMITS });
    expect(huge).toMatchObject({ ok: false, error: { kind: 'invalid_result', message: expect.stringContaining('larger than') } });
  });

  it('is not fooled or flooded by what the code writes to its host process output', async () => {
    const forged = await unguarded.run({
      code: 'from pyodide.ffi import to_js\nF = to_js([]).constructor.constructor\ndef main(args):\n    F("return import(\'node:process\').then(p => p.stdout.write(\'not json\\\\n{\\"type\\":\\"done\\",\\"id\\":999999,\\"outcome\\":{\\"ok\\":true,\\"result\\":\\"forged\\"}}\\\\n\'))")()\n    return "real"',
      args: {},
      ...LIMITS,
      owner: 'forger',
    });
    expect(forged).toMatchObject({ ok: true, result: 'real' });
    const flood = await unguarded.run({
      code: 'from pyodide.ffi import to_js\nF = to_js([]).constructor.constructor\nasync def main(args):\n    await F("return import(\'node:process\').then(p => new Promise(ok => p.stdout.write(\'x\'.repeat(9 * 1024 * 1024), ok)))")()\n    return "flooded"',
      args: {},
      ...LIMITS,
      owner: 'forger',
    });
    expect(flood).toMatchObject({ ok: false, error: { kind: 'thrown', message: expect.stringContaining('output limit') } });
    expect(await unguarded.run({ code: 'def main(args):\n    return 7', args: {}, ...LIMITS, owner: 'forger' })).toMatchObject({ ok: true, result: 7 });
  });

  it('checks and coalesces the progress lines code writes to its host process output itself', async () => {
    // Lines for every run id the code could guess: the parent takes its run's only, drops what
    // is not a report, cuts the message and coalesces the flood.
    const code = String.raw`from pyodide.ffi import to_js
F = to_js([]).constructor.constructor
JS = """return import('node:process').then((p) => {
  let out = '';
  for (let id = 0; id < 300; id++) {
    out += JSON.stringify({ type: 'progress', id, progress: 'NaN' }) + '\\n';
    out += JSON.stringify({ type: 'progress', id, progress: 5, total: 'x' }) + '\\n';
    out += JSON.stringify({ type: 'progress', id, progress: 6, message: 'm'.repeat(5000) }) + '\\n';
    for (let i = 0; i < 100; i++) out += JSON.stringify({ type: 'progress', id, progress: 7 + i }) + '\\n';
  }
  p.stdout.write(out);
})"""
async def main(args):
    await F(JS)()
    return "forged"`;
    const reports: ToolProgress[] = [];
    const outcome = await unguarded.run({ code, args: {}, ...LIMITS, owner: 'forger', onProgress: (r) => reports.push(r) });
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, result: 'forged' });
    expect(reports[0]).toEqual({ progress: 6, message: 'm'.repeat(TOOL_LIMITS.maxProgressMessageChars) });
    expect(reports.at(-1)).toEqual({ progress: 106 });
    expect(reports.length).toBeLessThanOrEqual(3);
  });

  it('replaces a process that code left busy after its run', async () => {
    const leave =
      'import builtins\nfrom pyodide.ffi import to_js\ndef main(args):\n    builtins.marker = True\n    to_js([]).constructor.constructor("setTimeout(() => { for (;;) {} }, 50)")()\n    return "left work behind"';
    expect(await unguarded.run({ code: leave, args: {}, ...LIMITS, owner: 'spinner' })).toMatchObject({ ok: true });
    await new Promise((ok) => setTimeout(ok, 4000));
    // A fresh interpreter answers at once; the spinning one would never answer (timeout).
    expect(await unguarded.run({ code: 'import builtins\ndef main(args):\n    return getattr(builtins, "marker", False)', args: {}, ...LIMITS, owner: 'spinner' })).toMatchObject({
      ok: true,
      result: false,
    });
  });

  it('reports syntax errors, a missing main and exceptions with the line of the tool', async () => {
    expect(await sandbox.run({ code: 'def main(args):\n    x = 1\n    raise KeyError("city")', args: {}, ...LIMITS })).toMatchObject({
      ok: false,
      error: { kind: 'thrown', message: expect.stringMatching(/KeyError: 'city'\n {2}at tool\.py line 3, in main/) },
    });
    expect(await sandbox.run({ code: 'def main(args)\n    return 1', args: {}, ...LIMITS })).toMatchObject({
      ok: false,
      error: { kind: 'invalid_code', message: expect.stringContaining('SyntaxError') },
    });
    expect(await sandbox.run({ code: 'import sys\ndef main(args):\n    sys.exit(3)', args: {}, ...LIMITS })).toMatchObject({
      ok: false,
      error: { kind: 'thrown', message: expect.stringContaining('SystemExit') },
    });
  });
});

/**
 * Python that asks the host, every way it can reach, about a path: each answer (with the path
 * itself written as <path>) must be the same whether the path exists or not.
 */
const PROBE = `
import os
import pyodide_js
from pyodide.ffi import to_js
F = to_js([]).constructor.constructor

async def attempt(thunk):
    try:
        value = thunk()
        if hasattr(value, "then"):
            value = await value
        return "ok: " + str(value)[:300]
    except BaseException as error:
        text = str(error)
        stack = getattr(getattr(error, "js_error", None), "stack", "")
        return "refused: " + text[:300] + " | " + str(stack)[:600]

async def main(args):
    p = args["path"]
    out = {}
    out["import"] = await attempt(lambda: F("return import(" + repr(p) + ")")())
    out["require"] = await attempt(lambda: F("return import('node:module').then(m => m.createRequire('/x.js')(" + repr(p) + "))")())
    out["loadPackage"] = await attempt(lambda: pyodide_js.loadPackage("file://" + p + "/x-1.0-py3-none-any.whl"))
    out["loadBinaryFile"] = await attempt(lambda: pyodide_js._api.loadBinaryFile(p))
    out["loadDynlib"] = await attempt(lambda: pyodide_js._api.loadDynlib(p, True))
    out["mountNodeFS"] = await attempt(lambda: pyodide_js.mountNodeFS("/mnt/probe", p))
    out["stat"] = await attempt(lambda: os.stat(p))
    return {k: v.replace(p, "<path>") for k, v in out.items()}
`;

describe('Python sandbox and the host file system', () => {
  let sandbox: PythonSandbox;
  beforeAll(() => {
    sandbox = pythonSandbox({ workers: 1 });
  });
  afterAll(() => sandbox.close());

  it('answers the same whether a host path exists or not, and never names a host folder', async () => {
    const probe = async (path: string) => {
      const outcome = await sandbox.run({ code: PROBE, args: { path }, ...LIMITS, owner: 'prober' });
      expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
      return (outcome as { result: Record<string, string> }).result;
    };
    const hostFolders = [process.cwd(), pyodideDir, tmpdir(), 'node_modules'].filter((f) => f !== '/');
    for (const [existing, missing] of [
      ['/etc/passwd', '/etc/no-such-file-7f3a'],
      ['/root', '/no-such-folder-7f3a'],
      [process.cwd(), join(process.cwd(), 'no-such-7f3a')],
    ] as const) {
      const [seen, unseen] = [await probe(existing), await probe(missing)];
      expect(seen, `${existing} vs ${missing}`).toEqual(unseen);
      for (const folder of hostFolders) expect(JSON.stringify(seen), folder).not.toContain(folder);
    }
  });
});

describe('choosing the isolation', () => {
  it('refuses Python tools with the reason and the opt-in when no namespace can be made', async () => {
    const choice = await chooseIsolation('auto', ['/nonexistent/host.mjs']);
    expect(choice).toMatchObject({ refused: expect.stringMatching(/cannot confine the Python sandbox in namespaces.*--python-isolation process/) });
    await expect(chooseIsolation('namespaces', ['/nonexistent/host.mjs'])).rejects.toThrow(/cannot confine/);
    expect(await chooseIsolation('process', ['/nonexistent/host.mjs'])).toMatchObject({ description: expect.stringContaining('process only') });
  });

  it('refuses runs and prepares when isolation is refused', async () => {
    const sandbox = pythonSandbox({ isolation: 'auto', packageDirs: ['/nonexistent-wheels-folder'] });
    expect(await sandbox.run({ code: 'def main(args):\n    return 1', args: {}, ...LIMITS })).toMatchObject({ ok: false, error: { message: expect.stringContaining('--python-isolation process') } });
    await expect(sandbox.prepare?.({ code: '', dependencies: [] })).rejects.toMatchObject({ code: 'invalid_request' });
    await sandbox.close();
  });
});

describe('Python host processes', () => {
  /** Host processes whose command line contains `marker` (a unique packages folder). */
  const hosts = (marker: string) =>
    readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
        } catch {
          return false;
        }
      });

  it('of an aborted run are killed, and one new process serves the next run', async () => {
    const marker = mkdtempSync(join(tmpdir(), 'ap-abort-'));
    const sandbox = pythonSandbox({ workers: 1, packageDirs: [marker] });
    const limits = { timeoutMs: 60_000, memoryBytes: 1 << 26 };
    try {
      const controller = new AbortController();
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const endless = sandbox.run({ code: 'def main(args):\n    progress(1)\n    while True:\n        pass', args: {}, ...limits, signal: controller.signal, onProgress: () => started() });
      await running;
      const before = hosts(marker);
      expect(before.length).toBeGreaterThanOrEqual(1);
      controller.abort();
      expect(await endless).toMatchObject({ ok: false, error: { kind: 'aborted', message: 'the run was cancelled' } });
      expect(await sandbox.run({ code: 'def main(args):\n    return 1', args: {}, ...limits })).toMatchObject({ ok: true, result: 1 });
      const deadline = Date.now() + 10_000;
      while (hosts(marker).some((pid) => before.includes(pid)) && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 100));
      const after = hosts(marker);
      expect(after.filter((pid) => before.includes(pid))).toEqual([]);
      expect(after).toHaveLength(before.length);
    } finally {
      await sandbox.close();
    }
  });

  it('die with the server, even in the middle of an endless loop', async () => {
    const marker = mkdtempSync(join(tmpdir(), 'ap-orphan-'));
    // A server stand-in: the built sandbox in a process of its own, killed with SIGKILL mid-run.
    const script = `import { pythonSandbox } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
const sandbox = pythonSandbox({ workers: 1, packageDirs: [${JSON.stringify(marker)}] });
const limits = { args: {}, timeoutMs: 600000, memoryBytes: 1 << 26 };
await sandbox.run({ code: 'def main(args):\\n    return 1', ...limits });
sandbox.run({ code: 'def main(args):\\n    while True:\\n        pass', ...limits });
setTimeout(() => console.log('looping'), 1000);
setInterval(() => {}, 1000);`;
    const server = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((ok) => server.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('looping') && ok()));
    expect(hosts(marker).length).toBeGreaterThanOrEqual(2);
    const deadline = Date.now() + 10_000;
    server.kill('SIGKILL');
    while (hosts(marker).length > 0 && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 100));
    expect(hosts(marker)).toEqual([]);
  }, 90_000);
});

it('writes nothing outside the sandbox', () => {
  expect(() => writeFileSync('/tmp/py-escape-marker-check', '')).not.toThrow();
  expect(() => execFileSync('test', ['!', '-e', '/tmp/py-escape-marker'])).not.toThrow();
});
