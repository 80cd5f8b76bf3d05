import { Ajv, type ValidateFunction } from 'ajv';
import type { AgentTool, ToolSource } from '../agent/tools.js';
import { PlatformError } from '../errors.js';
import type { Caller } from '../platform.js';
import type { StorageAdapter, ToolRecord } from '../storage/types.js';
import type { ToolLanguage, ToolOutcome, ToolSandbox } from './sandbox.js';

export interface ToolsOptions {
  /** The sandbox of each language; a language without one cannot have tools. */
  readonly sandboxes: Partial<Record<ToolLanguage, ToolSandbox>>;
  /** Per run. Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Per run. Default 64 MiB. */
  readonly memoryBytes?: number;
}

const ajv = new Ajv({ allErrors: true, strict: false });
/**
 * Compiled validators by the schema's JSON text, least recently used first out. Tool records are
 * read afresh for every run, so caching by object would compile (generate code, ~ms of the event
 * loop) on every run.
 */
const validators = new Map<string, ValidateFunction>();
const MAX_VALIDATORS = 1000;

/** Compiles a tool's parameters schema, or throws `invalid_request` naming the problem. */
export function compileParameters(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (validate) {
    validators.delete(key);
  } else {
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      throw PlatformError.invalid(`parameters: not a valid JSON Schema: ${(error as Error).message}`);
    } finally {
      // ajv keeps every compiled schema object too: drop them, this map is the cache.
      ajv.removeSchema();
    }
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value as string);
  }
  validators.set(key, validate);
  return validate;
}

/** Checks arguments against a tool's schema; the message names each offending argument. */
export function checkArguments(tool: ToolRecord, args: unknown): void {
  const validate = compileParameters(tool.parameters);
  if (!validate(args)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath ? `args${e.instancePath.replaceAll('/', '.')}` : 'args'} ${e.message ?? 'is invalid'}`);
    throw PlatformError.invalid(`Invalid arguments for tool ${tool.name}: ${problems.join('; ')}`);
  }
}

/** Runs tools in their language's sandbox. */
export class ToolRunner {
  constructor(private readonly o: ToolsOptions) {}

  sandbox(language: ToolLanguage): ToolSandbox {
    const sandbox = this.o.sandboxes[language];
    if (!sandbox) throw PlatformError.invalid(`language: ${language} tools are not available on this server (no ${language} sandbox)`);
    return sandbox;
  }

  /**
   * Checks, before a tool is saved, that its language has a sandbox and that the sandbox can
   * provide its dependencies (installing them), or throws `invalid_request` naming the problem.
   */
  async prepare(tool: Pick<ToolRecord, 'language' | 'code' | 'dependencies'>, signal?: AbortSignal): Promise<void> {
    const sandbox = this.sandbox(tool.language);
    if (tool.dependencies.length === 0) return;
    if (!sandbox.prepare) throw PlatformError.invalid(`dependencies: ${tool.language} tools cannot have dependencies on this server`);
    await sandbox.prepare({ code: tool.code, dependencies: tool.dependencies, ...(signal ? { signal } : {}) });
  }

  run(tool: ToolRecord, args: unknown): Promise<ToolOutcome> {
    checkArguments(tool, args);
    return this.sandbox(tool.language).run({
      code: tool.code,
      args,
      timeoutMs: this.o.timeoutMs ?? 5000,
      memoryBytes: this.o.memoryBytes ?? 64 * 1024 * 1024,
      dependencies: tool.dependencies,
      owner: tool.userId,
    });
  }

  /** The project's enabled tools as agent functions; a failing run's error goes back to the model. */
  source(storage: StorageAdapter): ToolSource {
    return {
      tools: async (_caller: Caller, projectId: string): Promise<AgentTool[]> =>
        (await storage.tools.enabled(projectId)).map((tool) => ({
          definition: { name: tool.name, description: tool.description, parameters: tool.parameters },
          run: async (args) => {
            const outcome = await this.run(tool, args);
            if (!outcome.ok) throw new Error(`${outcome.error.kind}: ${outcome.error.message}`);
            return JSON.stringify(outcome.result);
          },
        })),
    };
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.o.sandboxes).map((s) => s?.close()));
  }
}
