/**
 * The tool sandbox plug-in interface: runs untrusted tool code with its arguments under a time
 * and a memory limit, with no file system, no network and no environment. Conformance suite:
 * `describeToolSandbox` in `@agent-platform/core/testing`.
 */

export type ToolLanguage = 'javascript' | 'python';

export interface ToolRun {
  /** Defines `main(args)` (JavaScript: `function main` or `async function main`). */
  readonly code: string;
  /** The parsed arguments object. */
  readonly args: unknown;
  /** Wall-clock limit of the run in ms. */
  readonly timeoutMs: number;
  /** Memory limit of the run in bytes. */
  readonly memoryBytes: number;
}

export type ToolErrorKind = 'timeout' | 'out_of_memory' | 'thrown' | 'invalid_result' | 'invalid_code';

export type ToolOutcome =
  | { readonly ok: true; readonly result: unknown; readonly logs: readonly string[]; readonly durationMs: number }
  | { readonly ok: false; readonly error: { readonly kind: ToolErrorKind; readonly message: string }; readonly logs: readonly string[]; readonly durationMs: number };

export interface ToolSandbox {
  readonly language: ToolLanguage;
  /** Never throws for anything the code does: failures are outcomes. */
  run(run: ToolRun): Promise<ToolOutcome>;
  close(): Promise<void>;
}
