// Worker thread of the JavaScript tool sandbox. Each run gets a fresh QuickJS runtime
// (WebAssembly: no Node APIs exist inside it) with a memory limit and an interrupt deadline.
// The code defines main(args); its (awaited) return value comes back as JSON text, which the
// parent checks against the result limits before parsing it (a value nested thousands deep
// would overflow the stack of postMessage's structured clone).
import { parentPort, workerData } from 'node:worker_threads';
import { getQuickJS, shouldInterruptAfterDeadline } from 'quickjs-emscripten';

const QuickJS = await getQuickJS();

/**
 * Written by the parent while this thread runs code: the id of a job to stop (its signal
 * aborted). Read at every interrupt check of QuickJS, as the deadline is.
 */
const cancel = workerData.cancel;
const cancelled = (id) => Atomics.load(cancel, 0) === id;

/** Set once the WebAssembly module is not to be used again; every answer then asks for a new worker. */
let broken = false;

const format = (value) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)));

/**
 * Calls `body(vm, runtime)` with a fresh runtime under the memory limit and an interrupt
 * deadline (or the parent's cancel of job `id`), and gives its outcome; a failure of QuickJS
 * itself becomes an outcome too (with the `logs` so far), and a module left untrustworthy marks
 * this worker for replacement.
 */
function inRuntime({ id, memoryBytes, deadline, logs, onInterrupt }, body) {
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(memoryBytes);
  runtime.setMaxStackSize(1024 * 1024);
  const afterDeadline = shouldInterruptAfterDeadline(deadline);
  const interrupt = (rt) => cancelled(id) || afterDeadline(rt);
  // QuickJS asks every few thousand operations: a progress report that waits goes out then,
  // even while the code computes without calling progress again.
  runtime.setInterruptHandler(
    onInterrupt
      ? (rt) => {
          onInterrupt();
          return interrupt(rt);
        }
      : interrupt,
  );
  const vm = runtime.newContext();
  try {
    return body(vm, runtime);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Emscripten's abort() (a failed assertion in QuickJS) leaves the module unusable.
    if (/Aborted\(/.test(message)) broken = true;
    const kind = /out of memory/i.test(message) ? 'out_of_memory' : 'thrown';
    return { ok: false, error: { kind, message: kind === 'thrown' ? message : `the tool used more than ${memoryBytes} bytes` }, logs };
  } finally {
    try {
      vm.dispose();
      runtime.dispose();
    } catch {
      // A runtime that ran out of memory may not free cleanly (QuickJS aborts with
      // "Assertion failed: list_empty(&rt->gc_obj_list)"): the module's memory and state are not
      // to be trusted after that, so this worker asks to be replaced.
      broken = true;
    }
  }
}

/**
 * The code's `progress` reports as messages to the parent while the run goes on (this thread is
 * busy running the code: a message is the only way out): the first at once, then at most one
 * per `limits.progressIntervalMs`, a later report replacing the one that waits, which goes out
 * when its time has come (`tick`) or before the run's outcome (`flush`). Without `wanted`
 * nothing is sent.
 */
function progressGate(id, limits, wanted) {
  let last = Number.NEGATIVE_INFINITY;
  let waiting;
  const post = (report) => {
    waiting = undefined;
    last = Date.now();
    parentPort.postMessage({ type: 'progress', id, ...report });
  };
  return {
    report(report) {
      if (!wanted) return;
      if (Date.now() - last >= limits.progressIntervalMs) post(report);
      else waiting = report;
    },
    tick() {
      if (waiting && Date.now() - last >= limits.progressIntervalMs) post(waiting);
    },
    flush() {
      if (waiting) post(waiting);
    },
  };
}

/**
 * `progress(done, total, message)` in the code: checks its arguments (a TypeError for the code
 * otherwise) and hands them to the host's `__progress`, which it keeps to itself. The host checks
 * them again: code can replace String.prototype.slice before calling it.
 */
const PROGRESS_PRELUDE = `(() => {
  const report = globalThis.__progress;
  delete globalThis.__progress;
  const finite = (n) => typeof n === 'number' && Number.isFinite(n);
  globalThis.progress = function progress(done, total, message) {
    if (!finite(done)) throw new TypeError('progress: done must be a finite number');
    if (total !== undefined && total !== null && !finite(total)) throw new TypeError('progress: total must be a finite number');
    if (message !== undefined && message !== null && typeof message !== 'string') throw new TypeError('progress: message must be a string');
    report(done, total ?? undefined, typeof message === 'string' ? message.slice(0, MAX_MESSAGE) : undefined);
  };
})();`;

function runOne({ id, code, argsText, timeoutMs, memoryBytes, limits, progress: wantsProgress }) {
  const logs = [];
  let logChars = 0;
  const deadline = Date.now() + timeoutMs;
  const fail = (kind, message) => ({ ok: false, error: { kind, message }, logs });
  const gate = progressGate(id, limits, wantsProgress === true);
  const outcome = inRuntime({ id, memoryBytes, deadline, logs, onInterrupt: gate.tick }, (vm, runtime) => {
    const report = vm.newFunction('__progress', (doneHandle, totalHandle, messageHandle) => {
      const done = vm.typeof(doneHandle) === 'number' ? vm.getNumber(doneHandle) : Number.NaN;
      if (!Number.isFinite(done)) return;
      const total = totalHandle && vm.typeof(totalHandle) === 'number' ? vm.getNumber(totalHandle) : undefined;
      let message;
      if (messageHandle && vm.typeof(messageHandle) === 'string') {
        // The length first, so that a long string is not copied out of the WebAssembly heap.
        const lengthHandle = vm.getProp(messageHandle, 'length');
        const length = vm.getNumber(lengthHandle);
        lengthHandle.dispose();
        if (length > limits.maxProgressMessageChars) return;
        message = vm.getString(messageHandle);
      }
      gate.report({ progress: done, ...(Number.isFinite(total) ? { total } : {}), ...(message !== undefined ? { message } : {}) });
    });
    vm.setProp(vm.global, '__progress', report);
    report.dispose();
    const prelude = vm.evalCode(PROGRESS_PRELUDE.replace('MAX_MESSAGE', String(limits.maxProgressMessageChars)), 'prelude.js');
    if (prelude.error) {
      prelude.error.dispose();
      return fail('thrown', 'the sandbox could not install progress');
    }
    prelude.value.dispose();

    const consoleObject = vm.newObject();
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const fn = vm.newFunction(level, (...handles) => {
        if (logs.length >= limits.maxLogLines || logChars >= limits.maxLogChars) return;
        const line = handles
          .map((h) => format(vm.dump(h)))
          .join(' ')
          .slice(0, limits.maxLogLineChars);
        logs.push(line);
        logChars += line.length;
      });
      vm.setProp(consoleObject, level, fn);
      fn.dispose();
    }
    vm.setProp(vm.global, 'console', consoleObject);
    consoleObject.dispose();

    const source = `${code}
;if (typeof main !== 'function') throw new TypeError('the tool code must define a function main(args)');
globalThis.__run = Promise.resolve().then(() => main(JSON.parse(${JSON.stringify(argsText)}))).then((value) => {
  const text = JSON.stringify(value === undefined ? null : value);
  if (text === undefined) throw new TypeError('the result of main is not JSON-serialisable');
  return text;
});`;
    const evaluated = vm.evalCode(source, 'tool.js');
    if (evaluated.error) {
      const error = vm.dump(evaluated.error);
      evaluated.error.dispose();
      return classify(error, fail, true);
    }
    evaluated.value.dispose();
    const promise = vm.getProp(vm.global, '__run');
    // Run every pending job (the awaits of main) until the promise settles or time runs out.
    for (;;) {
      const state = vm.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        // The length first, so an oversized result is not copied out of the WebAssembly heap.
        const lengthHandle = vm.getProp(state.value, 'length');
        const length = vm.getNumber(lengthHandle);
        lengthHandle.dispose();
        if (length > limits.maxResultChars) {
          state.value.dispose();
          promise.dispose();
          return fail('invalid_result', `the result of main is larger than ${limits.maxResultChars} characters`);
        }
        const text = vm.getString(state.value);
        state.value.dispose();
        promise.dispose();
        return { ok: true, resultText: text, logs };
      }
      if (state.type === 'rejected') {
        const error = vm.dump(state.error);
        state.error.dispose();
        promise.dispose();
        return classify(error, fail, false);
      }
      if (cancelled(id)) {
        promise.dispose();
        return fail('aborted', 'the run was cancelled');
      }
      if (Date.now() > deadline) {
        promise.dispose();
        return fail('timeout', `the tool ran longer than ${timeoutMs} ms`);
      }
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        const error = vm.dump(jobs.error);
        jobs.error.dispose();
        promise.dispose();
        return classify(error, fail, false);
      }
      if (jobs.value === 0 && vm.getPromiseState(promise).type === 'pending') {
        promise.dispose();
        return fail('thrown', 'main never settled (it awaits something that cannot happen in the sandbox)');
      }
    }
  });
  // The last report goes out before the outcome (the parent receives messages in order).
  gate.flush();
  return outcome;

  function classify(error, failWith, atLoad) {
    const message = typeof error === 'object' && error ? `${error.name ?? 'Error'}: ${error.message ?? ''}`.trim() : String(error);
    if (/interrupted/i.test(message)) return cancelled(id) ? failWith('aborted', 'the run was cancelled') : failWith('timeout', `the tool ran longer than ${timeoutMs} ms`);
    if (/out of memory/i.test(message)) return failWith('out_of_memory', `the tool used more than ${memoryBytes} bytes`);
    if (/not JSON-serialisable|circular/i.test(message)) return failWith('invalid_result', message);
    if (atLoad && /SyntaxError/.test(message)) return failWith('invalid_code', message);
    return failWith('thrown', message);
  }
}

/**
 * Parses the code as runOne evaluates it (a global script, named tool.js), compiling it to
 * bytecode without running any of it. Its result is the first syntax error, `{ line, column,
 * message }` (from 1), or null.
 */
function checkOne({ id, code, timeoutMs, memoryBytes }) {
  return inRuntime({ id, memoryBytes, deadline: Date.now() + timeoutMs, logs: [] }, (vm) => {
    const compiled = vm.evalCode(code, 'tool.js', { type: 'global', compileOnly: true });
    if (!compiled.error) {
      compiled.value.dispose();
      return { ok: true, resultText: 'null', logs: [] };
    }
    const error = vm.dump(compiled.error);
    compiled.error.dispose();
    const message = typeof error === 'object' && error ? `${error.name ?? 'Error'}: ${error.message ?? ''}`.trim() : String(error);
    if (/interrupted/i.test(message)) return { ok: false, error: { kind: 'timeout', message: `the tool ran longer than ${timeoutMs} ms` }, logs: [] };
    if (/out of memory/i.test(message)) return { ok: false, error: { kind: 'out_of_memory', message: `the tool used more than ${memoryBytes} bytes` }, logs: [] };
    // QuickJS gives the place as the first frame of the stack: "    at tool.js:LINE:COLUMN".
    const at = /tool\.js:(\d+):(\d+)/.exec(String(error?.stack ?? ''));
    const line = at ? Number(at[1]) : Number(error?.lineNumber) || 1;
    const column = at ? Number(at[2]) : 1;
    const text = code.split('\n')[line - 1] ?? '';
    // A module's import statement in a script: the parser's own words ("expecting '('") do not say why.
    const hint = /^\s*import\s*[\w{*'"]/.test(text) ? " (import statements need the package in the tool's dependencies)" : '';
    return { ok: true, resultText: JSON.stringify({ line, column, message: `${message}${hint}` }), logs: [] };
  });
}

parentPort.on('message', (request) => {
  const started = performance.now();
  let outcome;
  try {
    outcome = broken ? { ok: false, error: { kind: 'thrown', message: 'the sandbox worker is being replaced' }, logs: [] } : request.type === 'check' ? checkOne(request) : runOne(request);
  } catch (error) {
    broken = true;
    outcome = { ok: false, error: { kind: 'thrown', message: `the sandbox failed: ${error instanceof Error ? error.message : String(error)}` }, logs: [] };
  }
  parentPort.postMessage({ id: request.id, outcome: { ...outcome, durationMs: performance.now() - started }, recycle: broken });
});
