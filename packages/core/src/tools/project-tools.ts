import type { AgentTool, ToolSource } from '../agent/tools.js';
import type { Caller } from '../context.js';
import { PlatformError } from '../errors.js';
import type { StorageAdapter, ToolRecord } from '../storage/types.js';
import { codeSyntaxError } from './code-syntax.js';
import { type FairQueueLimits, FairScheduler } from './fair-queue.js';
import type { ToolProgressListener } from './progress.js';
import type { ToolErrorKind, ToolLanguage, ToolOutcome, ToolSandbox } from './sandbox.js';
import { SchemaValidator, type SchemaValidatorOptions } from './schema-validator.js';

export interface ToolsOptions {
  /** The sandbox of each language; a language without one cannot have tools. */
  readonly sandboxes: Partial<Record<ToolLanguage, ToolSandbox>>;
  /** Per run. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Per run. Default 64 MiB. */
  readonly memoryBytes?: number;
  /**
   * Runs waiting for a sandbox, per user and in all (each language has its own queue). One
   * more is refused with `rate_limited`. Default 64 per user, 1024 in all.
   */
  readonly queue?: FairQueueLimits;
  /** How arguments are checked against `parameters` (time limit, queue). */
  readonly validation?: SchemaValidatorOptions;
}

/** A run's outcome as the runner gives it: an aborted run is an `aborted` error instead. */
export type FinishedToolOutcome = Extract<ToolOutcome, { ok: true }> | (Extract<ToolOutcome, { ok: false }> & { readonly error: { readonly kind: Exclude<ToolErrorKind, 'aborted'> } });

/** Default bounds of each language's run queue. */
export const DEFAULT_TOOL_QUEUE: FairQueueLimits = { maxPerOwner: 64, maxTotal: 1024 };

/**
 * Runs tools in their language's sandbox. Each sandbox gets at most `concurrency` runs at once;
 * the others wait in a fair queue per user (ToolRun.owner), so one user's flood of runs delays
 * another user's run by at most about one run, and the queue is bounded (`rate_limited`).
 */
export class ToolRunner {
  readonly #validator: SchemaValidator;
  readonly #schedulers = new Map<ToolLanguage, FairScheduler>();
  readonly #timeoutMs: number;
  readonly #memoryBytes: number;

  constructor(private readonly o: ToolsOptions) {
    this.#validator = new SchemaValidator(o.validation);
    this.#timeoutMs = o.timeoutMs ?? 5000;
    this.#memoryBytes = o.memoryBytes ?? 64 * 1024 * 1024;
  }

  /** Compiles a tool's parameters schema off the event loop, or throws `invalid_request` naming the problem. */
  compileParameters(owner: string, schema: Record<string, unknown>): Promise<void> {
    return this.#validator.compile(owner, schema);
  }

  /** Checks arguments against a tool's schema; the `invalid_request` message names each offending argument. */
  async checkArguments(tool: ToolRecord, args: unknown, signal?: AbortSignal): Promise<void> {
    const what = `Invalid arguments for tool ${tool.name}`;
    const problems = await this.#validator.check(tool.userId, tool.parameters, args, what, signal);
    if (problems.length > 0) throw PlatformError.invalid(`${what}: ${problems.join('; ')}`);
  }

  #scheduler(language: ToolLanguage, sandbox: ToolSandbox): FairScheduler {
    let scheduler = this.#schedulers.get(language);
    if (!scheduler) {
      scheduler = new FairScheduler(Math.max(1, sandbox.concurrency ?? 1), this.o.queue ?? DEFAULT_TOOL_QUEUE, `${language} tool runs`);
      this.#schedulers.set(language, scheduler);
    }
    return scheduler;
  }

  sandbox(language: ToolLanguage): ToolSandbox {
    const sandbox = this.o.sandboxes[language];
    if (!sandbox) throw PlatformError.invalid(`language: ${language} tools are not available on this server (no ${language} sandbox)`);
    return sandbox;
  }

  /**
   * Checks, before a tool is saved, that its language has a sandbox, that its code parses in
   * that sandbox (never running it: `invalid_request` naming the line and column, see
   * `codeSyntaxError`) and that the sandbox can provide its dependencies (installing them), or
   * throws `invalid_request` naming the problem. The parse waits for a place in the sandbox
   * like a run of `owner`'s.
   */
  async prepare(owner: string, tool: Pick<ToolRecord, 'language' | 'code' | 'dependencies'>, signal?: AbortSignal): Promise<void> {
    const sandbox = this.sandbox(tool.language);
    if (sandbox.checkSyntax) {
      const check = sandbox.checkSyntax.bind(sandbox);
      const problem = await this.#scheduler(tool.language, sandbox).run(
        owner,
        () => check({ code: tool.code, dependencies: tool.dependencies, timeoutMs: this.#timeoutMs, memoryBytes: this.#memoryBytes, owner }),
        signal,
      );
      if (problem) throw codeSyntaxError(problem);
    }
    if (tool.dependencies.length === 0) return;
    if (!sandbox.prepare) throw PlatformError.invalid(`dependencies: ${tool.language} tools cannot have dependencies on this server`);
    await sandbox.prepare({ code: tool.code, dependencies: tool.dependencies, ...(signal ? { signal } : {}) });
  }

  /**
   * Checks the arguments, then runs the tool when its sandbox has room for it; `onProgress` is
   * told the progress its code reports while it runs (`ToolRun.onProgress`). Throws
   * `invalid_request` for bad arguments, `rate_limited` when the queue is full, and `aborted`
   * when `signal` aborts, whether the run waits or runs: a running one is stopped in its
   * sandbox (`ToolRun.signal`), so its place goes to the next run at once.
   */
  async run(tool: ToolRecord, args: unknown, signal?: AbortSignal, onProgress?: ToolProgressListener): Promise<FinishedToolOutcome> {
    const sandbox = this.sandbox(tool.language);
    await this.checkArguments(tool, args, signal);
    const outcome = await this.#scheduler(tool.language, sandbox).run(
      tool.userId,
      () =>
        sandbox.run({
          code: tool.code,
          args,
          timeoutMs: this.#timeoutMs,
          memoryBytes: this.#memoryBytes,
          dependencies: tool.dependencies,
          owner: tool.userId,
          ...(onProgress ? { onProgress } : {}),
          ...(signal ? { signal } : {}),
        }),
      signal,
    );
    if (!outcome.ok && outcome.error.kind === 'aborted') throw new PlatformError('aborted', 'The request was aborted');
    return outcome as FinishedToolOutcome;
  }

  /** The project's enabled tools as agent functions; a failing run's error goes back to the model. */
  source(storage: StorageAdapter): ToolSource {
    return {
      tools: async (_caller: Caller, projectId: string): Promise<AgentTool[]> =>
        (await storage.tools.enabled(projectId)).map((tool) => ({
          definition: { name: tool.name, description: tool.description, parameters: tool.parameters },
          ...(tool.requiresApproval ? { requiresApproval: true } : {}),
          run: async (args, { signal, onProgress }) => {
            const outcome = await this.run(tool, args, signal, onProgress);
            if (!outcome.ok) throw new Error(`${outcome.error.kind}: ${outcome.error.message}`);
            return JSON.stringify(outcome.result);
          },
        })),
    };
  }

  async close(): Promise<void> {
    for (const scheduler of this.#schedulers.values()) scheduler.close(new PlatformError('aborted', 'The tool runner is closed'));
    await Promise.all([this.#validator.close(), ...Object.values(this.o.sandboxes).map((s) => s?.close())]);
  }
}
