// The process that runs Python tools: Pyodide (CPython compiled to WebAssembly) in a Node.js
// child process started by python.ts with an empty environment, Node's permission model (no
// file reads but Pyodide's own files and the package folders, no writes, no child processes, no
// workers, no addons, no WASI) and, where the machine allows it, new network and PID
// namespaces and an unprivileged uid. Python code can reach this process's JavaScript (through
// pyodide.code.run_js and the FFI), so THIS PROCESS is the boundary, not the interpreter; the
// guards below only narrow what is left.
//
// Protocol: newline-delimited JSON. stdin: {type:"run", id, code, args (JSON text), packages
// (wheel paths / Pyodide package names to load first), limits (TOOL_LIMITS)}, or the same with
// type "check": compile the code only, never run it (the result is {line, column, message} of
// its syntax error, or null). stdout:
// {type:"ready", python, stdlib}, {type:"started", id} once packages are loaded, {type:"done",
// id, outcome} where a successful outcome carries its result as JSON text (resultText). The parent enforces
// the time and memory limits by killing this process.
//
// Arguments: PYODIDE_DIR [--no-guards] [--snapshot BYTES | --make-snapshot]. A snapshot is the
// interpreter's memory right after start-up, made once by a process that runs no tool code
// (--make-snapshot writes it to stdout and exits); a host given --snapshot reads that many
// bytes from stdin before the requests and starts from them, skipping Python's initialisation
// (about 7x faster).
import { constants } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [pyodideDir, ...flags] = process.argv.slice(2);
// Emscripten names the program after argv[1], this script's path on the server: Python would
// show it as sys.executable and as the environment's `_`. Without it the name is Emscripten's
// own `./this.program`.
process.argv.length = 1;
const makeSnapshot = flags.includes('--make-snapshot');
const snapshotBytes = flags.includes('--snapshot') ? Number(flags[flags.indexOf('--snapshot') + 1]) : 0;
const write = process.stdout.write.bind(process.stdout);
const send = (message) => write(`${JSON.stringify(message)}\n`);

// Emscripten's NODEFS reads fs constants through process.binding, which the permission model
// forbids: answer exactly that and nothing else.
const binding = process.binding;
process.binding = (name) => {
  if (name === 'constants') return { fs: constants };
  return binding.call(process, name);
};

const { loadPyodide } = await import(pathToFileURL(`${pyodideDir}/pyodide.mjs`).href);

// stdin: first the snapshot (if any), then request lines, handled one after another.
let snapshotDone;
const snapshot = new Promise((resolve) => {
  snapshotDone = resolve;
});
const snapshotChunks = [];
let snapshotLeft = snapshotBytes;
let pending = '';
let chain = Promise.resolve();
if (!makeSnapshot)
  process.stdin.on('data', (chunk) => {
    if (snapshotLeft > 0) {
      const part = chunk.subarray(0, snapshotLeft);
      snapshotChunks.push(part);
      snapshotLeft -= part.length;
      if (snapshotLeft === 0) snapshotDone(Buffer.concat(snapshotChunks));
      chunk = chunk.subarray(part.length);
    }
    pending += chunk.toString('utf8');
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      chain = chain.then(() => ready).then(() => request(line));
      newline = pending.indexOf('\n');
    }
  });
if (!makeSnapshot) process.stdin.on('end', () => chain.then(() => process.exit(0)));
if (snapshotBytes === 0) snapshotDone(undefined);
let markReady;
const ready = new Promise((resolve) => {
  markReady = resolve;
});

// The output limits (TOOL_LIMITS of @agent-platform/core) come with each request; the parent
// applies them again to what it receives.
let limits = { maxLogLines: 1000, maxLogLineChars: 10_000, maxLogChars: 256 * 1024, maxResultChars: 1024 * 1024, maxDepth: 64, progressIntervalMs: 100, maxProgressMessageChars: 500 };
let logs = [];
let logChars = 0;
const capture = (line) => {
  if (logs.length >= limits.maxLogLines || logChars >= limits.maxLogChars) return;
  const text = String(line).slice(0, limits.maxLogLineChars);
  logs.push(text);
  logChars += text.length;
};

/**
 * A tool's whole environment (os.environ), the same on every server: Emscripten's defaults with
 * Pyodide's home, plus LD_LIBRARY_PATH as Pyodide sets it (the folders where its packages'
 * libraries are). Nothing of the server (its environment is not passed to this process, nor
 * this script's path to Emscripten) and nothing else: not Emscripten's `_` (the program's name)
 * nor PYTHONINSPECT, which Pyodide sets for its own start-up. Documented in docs/TOOLS.md.
 */
const TOOL_ENVIRONMENT = Object.freeze({
  HOME: '/home/pyodide',
  USER: 'web_user',
  LOGNAME: 'web_user',
  PATH: '/',
  PWD: '/',
  LANG: 'C.UTF-8',
});

// `jsglobals` is what Python's `js` module shows: nothing.
const pyodide = await loadPyodide({
  indexURL: `${pyodideDir}/`,
  jsglobals: Object.create(null),
  stdout: capture,
  stderr: capture,
  // A copy: Pyodide adds to the object it is given.
  env: { ...TOOL_ENVIRONMENT },
  ...(makeSnapshot ? { _makeSnapshot: true } : {}),
  ...(snapshotBytes > 0 ? { _loadSnapshot: await snapshot } : {}),
});

if (makeSnapshot) {
  pyodide.runPython('import json, inspect, traceback, asyncio');
  process.stdout.write(pyodide.makeMemorySnapshot(), () => process.exit(0));
  await new Promise(() => {});
}

// Exactly TOOL_ENVIRONMENT, after start-up and after a snapshot's (which holds the environment
// of the process that made it), whatever Emscripten or Pyodide set on the way.
// LD_LIBRARY_PATH is Pyodide's (the folders of its version where packages' libraries are).
pyodide.runPython(`
import os
_library_path = os.environ.get("LD_LIBRARY_PATH")
os.environ.clear()
os.environ.update(${JSON.stringify(TOOL_ENVIRONMENT)})
if _library_path is not None:
    os.environ["LD_LIBRARY_PATH"] = _library_path
del os, _library_path
`);
if (!flags.includes('--no-guards')) await guardNetworkAndProcesses();
await hideHostFiles();

/**
 * The progress reports of the run under way, written to the parent while the code runs (stdout
 * is a pipe, written synchronously): the first at once, then at most one per
 * `limits.progressIntervalMs`, a later report replacing the one that waits, which goes out when
 * its time has come (if the code lets the event loop run, e.g. awaiting) or before the run's
 * outcome (`flush`). Without `wanted` nothing is written.
 */
function progressGate(id, wanted) {
  let last = Number.NEGATIVE_INFINITY;
  let waiting;
  let timer;
  const post = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!waiting) return;
    send({ type: 'progress', id, ...waiting });
    waiting = undefined;
    last = performance.now();
  };
  return {
    report(done, total, message) {
      // Checked again here: Python code can call this function with anything.
      if (!wanted || typeof done !== 'number' || !Number.isFinite(done)) return;
      if (typeof message === 'string' && message.length > limits.maxProgressMessageChars) return;
      waiting = { progress: done, ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}), ...(typeof message === 'string' ? { message } : {}) };
      const wait = last + limits.progressIntervalMs - performance.now();
      if (wait <= 0) post();
      else timer ??= setTimeout(post, wait);
    },
    flush() {
      post();
      wanted = false;
    },
  };
}
let gate = progressGate(0, false);
const reportProgress = (done, total, message) => gate.report(done, total, message);

const tools = pyodide.runPython(
  `
import json, inspect, math, traceback

def _fail(kind, message):
    return json.dumps({"ok": False, "error": {"kind": kind, "message": message}})

def _describe(error):
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "tool.py"]
    if frames:
        text += "".join(f"\\n  at tool.py line {f.lineno}, in {f.name}" for f in frames[-5:])
    return text

def _finite(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False

def _progress(report, max_message):
    def progress(done, total=None, message=None):
        "Reports how far the tool has come: done (of total), with a message."
        if not _finite(done):
            raise TypeError("progress: done must be a finite number")
        if total is not None and not _finite(total):
            raise TypeError("progress: total must be a finite number")
        if message is not None and not isinstance(message, str):
            raise TypeError("progress: message must be a string")
        report(float(done), None if total is None else float(total), None if message is None else message[:max_message])
    return progress

async def run(code, args_json, max_result, max_depth, report, max_message):
    try:
        compiled = compile(code, "tool.py", "exec")
    except (SyntaxError, ValueError) as error:
        return _fail("invalid_code", _describe(error))
    namespace = {"__name__": "__tool__", "progress": _progress(report, max_message)}
    try:
        exec(compiled, namespace)
        main = namespace.get("main")
        if not callable(main):
            return _fail("invalid_code", "the tool code must define a function main(args)")
        result = main(json.loads(args_json))
        if inspect.isawaitable(result):
            result = await result
    except MemoryError as error:
        return _fail("out_of_memory", "the tool ran out of memory")
    except BaseException as error:
        return _fail("thrown", _describe(error))
    try:
        text = json.dumps(result, allow_nan=False)
    except RecursionError:
        return _fail("invalid_result", f"the result of main is nested deeper than {max_depth} levels")
    except (TypeError, ValueError) as error:
        return _fail("invalid_result", f"the result of main is not JSON-serialisable: {error}")
    if len(text) > max_result:
        return _fail("invalid_result", f"the result of main is larger than {max_result} characters")
    return json.dumps({"ok": True, "result": text})

def check(code):
    try:
        compile(code, "tool.py", "exec", dont_inherit=True)
    except SyntaxError as error:
        line = error.lineno or 1
        column = error.offset or 1
        message = f"{type(error).__name__}: {error.msg}"
        return json.dumps({"ok": True, "result": json.dumps({"line": line, "column": column, "message": message})})
    except ValueError as error:
        # e.g. "source code string cannot contain null bytes": no place to name.
        return json.dumps({"ok": True, "result": json.dumps({"line": 1, "column": 1, "message": f"ValueError: {error}"})})
    except MemoryError:
        return _fail("out_of_memory", "the tool ran out of memory")
    return json.dumps({"ok": True, "result": "null"})

(run, check)
`,
  { globals: pyodide.toPy({}) },
);
const [runner, checker] = [tools.get(0), tools.get(1)];

const stdlib = pyodide.runPython('import sys; sorted(sys.stdlib_module_names)').toJs();
const python = pyodide.runPython('import sys; sys.version.split()[0]');
const loaded = new Set();

async function handle(request) {
  if (request.limits) limits = request.limits;
  logs = [];
  logChars = 0;
  const toLoad = request.packages.filter((p) => !loaded.has(p));
  if (toLoad.length > 0) {
    const problems = [];
    await pyodide.loadPackage(toLoad, { messageCallback: () => {}, errorCallback: (m) => problems.push(m), checkIntegrity: true });
    if (problems.length > 0) {
      return { ok: false, error: { kind: 'invalid_code', message: `a dependency could not be loaded: ${problems.join('; ')}` }, logs: [] };
    }
    for (const p of toLoad) loaded.add(p);
  }
  send({ type: 'started', id: request.id });
  gate = progressGate(request.id, request.progress === true);
  let text;
  try {
    text = request.type === 'check' ? checker(request.code) : await runner(request.code, request.args, limits.maxResultChars, limits.maxDepth, reportProgress, limits.maxProgressMessageChars);
  } finally {
    // The last report goes out before the outcome.
    gate.flush();
  }
  const outcome = JSON.parse(text);
  // The result stays JSON text: the parent checks its size and depth before parsing it.
  return outcome.ok ? { ok: true, resultText: outcome.result, logs } : { ok: false, error: outcome.error, logs };
}

async function request(line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message?.type !== 'run' && message?.type !== 'check') return;
  const started = performance.now();
  let outcome;
  try {
    outcome = await handle(message);
  } catch (error) {
    // Pyodide itself failed (a fatal error, a stack overflow in WebAssembly): report it, then
    // stop so that the parent starts a fresh process.
    send({
      type: 'done',
      id: message.id,
      outcome: { ok: false, error: { kind: 'thrown', message: `the Python runtime failed: ${String(error?.message ?? error).slice(0, 2000)}` }, logs, durationMs: performance.now() - started },
    });
    process.exit(70);
  }
  send({ type: 'done', id: message.id, outcome: { ...outcome, durationMs: performance.now() - started } });
}

markReady();
send({ type: 'ready', python, stdlib });

/**
 * Second layer: network and process functions of Node.js throw from now on. Builtin modules are
 * shared by every importer in this process, so code that imports them later (Python through
 * run_js included) gets these versions. The first layer is the network namespace (python.ts).
 */
async function guardNetworkAndProcesses() {
  const refuse = (what) =>
    function refused() {
      throw Object.assign(new Error(`${what} is not available in the tool sandbox`), { code: 'ERR_ACCESS_DENIED' });
    };
  const net = (await import('node:net')).default;
  const tls = (await import('node:tls')).default;
  const dgram = (await import('node:dgram')).default;
  const dns = (await import('node:dns')).default;
  const http = (await import('node:http')).default;
  const https = (await import('node:https')).default;
  const http2 = (await import('node:http2')).default;
  const inspector = (await import('node:inspector')).default;
  const { syncBuiltinESMExports } = await import('node:module');

  const network = refuse('network access');
  net.Socket.prototype.connect = network;
  net.Server.prototype.listen = network;
  net.connect = network;
  net.createConnection = network;
  tls.connect = network;
  dgram.createSocket = network;
  for (const method of ['bind', 'send', 'connect']) dgram.Socket.prototype[method] = network;
  for (const target of [dns, dns.promises, dns.Resolver.prototype, dns.promises.Resolver.prototype]) {
    for (const key of Object.getOwnPropertyNames(target)) {
      if (/^(lookup|resolve|reverse)/.test(key) && typeof target[key] === 'function') target[key] = network;
    }
  }
  // Constructors that create network handles before any method is called.
  dgram.Socket = network;
  dns.Resolver = network;
  dns.promises.Resolver = network;
  http.request = http.get = https.request = https.get = network;
  http2.connect = network;
  inspector.open = refuse('the inspector');
  inspector.Session.prototype.connect = refuse('the inspector');
  inspector.Session.prototype.connectToMainThread = refuse('the inspector');
  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest']) delete globalThis[name];

  const processes = refuse('signalling processes');
  process.kill = processes;
  process._kill = processes;
  process._debugProcess = processes;
  process.dlopen = refuse('loading native code');
  syncBuiltinESMExports();
}

/**
 * What a tool may learn about the host's files from errors: nothing. Node's module resolvers
 * look files up before the permission model is asked (`import('/etc/x')` said "Cannot find
 * module" for a missing file and "Access to this API has been restricted" for an existing one),
 * so: JavaScript cannot be compiled from strings in this process (--disallow-code-generation-
 * from-strings, set by python.ts: Python cannot write an `import()` of its own), `require` of
 * anything but a builtin fails with one message whatever the path, and stack traces name files
 * without their folders (no absolute host paths).
 */
async function hideHostFiles() {
  const Module = (await import('node:module')).default;
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function resolveBuiltinOnly(request, ...rest) {
    if (typeof request === 'string' && Module.isBuiltin(request)) return resolveFilename.call(this, request, ...rest);
    throw Object.assign(new Error('modules cannot be loaded in the tool sandbox'), { code: 'ERR_ACCESS_DENIED' });
  };
  const base = (name) => String(name ?? '<anonymous>').replace(/^.*[/\\]/, '');
  Error.prepareStackTrace = (error, frames) =>
    [String(error), ...frames.map((f) => `    at ${f.getFunctionName() ?? '<anonymous>'} (${base(f.getFileName())}:${f.getLineNumber()}:${f.getColumnNumber()})`)].join('\n');
}
