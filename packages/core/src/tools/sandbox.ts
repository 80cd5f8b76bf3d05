import type { ToolProgressListener } from './progress.js';

/**
 * The tool sandbox plug-in interface: runs untrusted tool code with its arguments under a time
 * and a memory limit, with no file system, no network and no environment. Conformance suite:
 * `describeToolSandbox` in `@agent-platform/core/testing`.
 */

export type ToolLanguage = 'javascript' | 'python';

export interface ToolRun {
  /** Defines `main(args)` (JavaScript: `function main` or `async function main`; Python: `def main(args)` or `async def`). */
  readonly code: string;
  /** The parsed arguments object. */
  readonly args: unknown;
  /** Wall-clock limit of the run in ms. */
  readonly timeoutMs: number;
  /** Memory limit of the run in bytes. */
  readonly memoryBytes: number;
  /**
   * Packages the code imports, as saved with the tool (npm specs for JavaScript, package names
   * for Python). Default none. A sandbox provides them as `prepare` checked them.
   */
  readonly dependencies?: readonly string[];
  /**
   * Whose code this is (the tool's user id). Runs of different owners never share interpreter
   * state; runs of one owner may (a sandbox that keeps warm interpreters binds them to an owner).
   * Default: one anonymous owner.
   */
  readonly owner?: string;
  /**
   * Told the progress the code reports (`progress(done, total, message)`) while the run goes on,
   * not after it: each report checked (`toToolProgress`), at most one per
   * `TOOL_LIMITS.progressIntervalMs`, the last always before the run's outcome
   * (`progressRelay` does all this). Default none: reports are dropped.
   */
  readonly onProgress?: ToolProgressListener;
  /**
   * Cancels the run: one that waits is dropped, one that runs is stopped (its interpreter
   * interrupted, or its worker or process killed and replaced) and its place is free for the
   * next run at once. Either way the run settles at once with an `aborted` outcome, which the
   * platform turns into an `aborted` error (nobody waits for its result). Default none.
   */
  readonly signal?: AbortSignal;
}

/** `aborted`: the run's `signal` aborted before it ended (see `ToolRun.signal`). */
export type ToolErrorKind = 'timeout' | 'out_of_memory' | 'thrown' | 'invalid_result' | 'invalid_code' | 'aborted';

export type ToolOutcome =
  | { readonly ok: true; readonly result: unknown; readonly logs: readonly string[]; readonly durationMs: number }
  | { readonly ok: false; readonly error: { readonly kind: ToolErrorKind; readonly message: string }; readonly logs: readonly string[]; readonly durationMs: number };

/** What `prepare` looks at when a tool is saved. */
export interface ToolDefinitionToPrepare {
  readonly code: string;
  readonly dependencies: readonly string[];
  readonly signal?: AbortSignal;
}

/** Where tool code stops parsing: what `checkSyntax` finds. */
export interface CodeSyntaxError {
  /** From 1. */
  readonly line: number;
  /** From 1, in characters (Unicode code points) of the line. */
  readonly column: number;
  /** The parser's own words, e.g. `SyntaxError: unexpected token in expression: '}'`. */
  readonly message: string;
}

/** What `checkSyntax` parses, under the limits of a run. */
export interface ToolCodeCheck {
  readonly code: string;
  /** As saved with the tool: code with dependencies may be parsed by what readies them (`prepare`) instead. */
  readonly dependencies: readonly string[];
  /** Wall-clock limit of the parse in ms. */
  readonly timeoutMs: number;
  /** Memory limit of the parse in bytes. */
  readonly memoryBytes: number;
  /** Whose code this is (as `ToolRun.owner`). */
  readonly owner?: string;
}

export interface ToolSandbox {
  readonly language: ToolLanguage;
  /**
   * Runs the sandbox executes at once (its workers or processes). The platform hands it at most
   * this many runs at a time and keeps the others in a fair queue per owner, so that one
   * owner's flood cannot take every place. Default 1.
   */
  readonly concurrency?: number;
  /**
   * Called when a tool is saved: checks that its dependencies can be provided and readies them
   * (installs, bundles, caches), so that runs start fast. Rejects with a `PlatformError`
   * (`invalid_request`) whose message names the dependency that cannot be provided and why.
   * Optional: a sandbox without it accepts no dependencies.
   */
  prepare?(tool: ToolDefinitionToPrepare): Promise<void>;
  /**
   * Called when a tool is saved, before `prepare`: parses the code as a run would, without
   * running any of it, and resolves to the first syntax error (line, column and the parser's
   * message), or undefined when the code parses. Rejects with a `PlatformError` when the parse
   * itself could not be done (the time or memory limit, a sandbox that cannot start).
   * Optional: without it, code that does not parse fails at its first run (`invalid_code`).
   */
  checkSyntax?(check: ToolCodeCheck): Promise<CodeSyntaxError | undefined>;
  /**
   * Never throws for anything the code does: failures are outcomes. A result larger than
   * `TOOL_LIMITS.maxResultChars` as JSON or nested deeper than `TOOL_LIMITS.maxDepth` is an
   * `invalid_result` outcome naming the limit (`parseToolResult` gives the messages), and logs
   * are capped as `capLogs` does. Rejects with `invalid_request` when `args` is nested deeper
   * than `TOOL_LIMITS.maxDepth`.
   */
  run(run: ToolRun): Promise<ToolOutcome>;
  close(): Promise<void>;
}
