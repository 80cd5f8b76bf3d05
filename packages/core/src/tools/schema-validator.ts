import { Worker } from 'node:worker_threads';
import { PlatformError } from '../errors.js';
import { schemaWorkerUrl } from '../schema-worker-url.js';
import { type FairQueueLimits, FairScheduler } from './fair-queue.js';
import { jsonWithinDepth, TOOL_LIMITS } from './limits.js';

export interface SchemaValidatorOptions {
  /** Time one compile or one check may take, ms; past it the worker is replaced and the call fails. Default 1000. */
  readonly timeoutMs?: number;
  /** Checks waiting for the worker, per user and in all. Default 64 per user, 1024 in all. */
  readonly queue?: FairQueueLimits;
}

/** Time the worker may take to load ajv and re2js (not counted in any call's limit). */
const START_TIMEOUT_MS = 30_000;

interface Reply {
  readonly id: number;
  readonly ok: boolean;
  readonly problems?: readonly string[];
  readonly phase?: 'compile' | 'validate';
  readonly message?: string;
}

/**
 * Compiles tools' `parameters` schemas and checks arguments against them on a worker thread,
 * never on the event loop: regular expressions run on RE2 (linear time) and `uniqueItems` is
 * linear (see schema-worker.js), and whatever else a schema makes expensive (anyOf/oneOf/$ref
 * blowing up exponentially, a huge schema to compile) is cut by a time limit, after which the
 * worker is terminated and a fresh one takes the next call. Calls wait their turn fairly per
 * user. Values nested deeper than `TOOL_LIMITS.maxDepth` are refused before anything
 * recursive (JSON.stringify, structured clone) sees them.
 */
export class SchemaValidator {
  readonly #timeoutMs: number;
  readonly #scheduler: FairScheduler;
  #worker: Worker | undefined;
  #starting: Promise<Worker> | undefined;
  #nextId = 0;
  #current: { id: number; resolve(reply: Reply): void } | undefined;

  constructor(options: SchemaValidatorOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 1000;
    this.#scheduler = new FairScheduler(1, options.queue ?? { maxPerOwner: 64, maxTotal: 1024 }, 'argument checks');
  }

  /** The schema's JSON text (the cache key), or `invalid_request` when it is too deep or too large; `what` names the schema (default `parameters`). */
  static text(schema: Record<string, unknown>, what = 'parameters'): string {
    const text = jsonWithinDepth(what, schema);
    if (text.length > TOOL_LIMITS.maxSchemaChars) throw PlatformError.invalid(`${what}: larger than ${TOOL_LIMITS.maxSchemaChars} characters of JSON`);
    return text;
  }

  /** Compiles `schema` (cached in the worker), or throws `invalid_request` naming the problem and `what` (default `parameters`). */
  async compile(owner: string, schema: Record<string, unknown>, what = 'parameters'): Promise<void> {
    const text = SchemaValidator.text(schema, what);
    const reply = await this.#call(owner, { op: 'compile', schema: text }, `compiling ${what}`);
    if (!reply.ok) throw PlatformError.invalid(`${what}: not a valid JSON Schema: ${reply.message}`);
  }

  /**
   * The problems of `args` against `schema` (none when they are valid), each naming the
   * argument. Throws `invalid_request` whose message starts with `what` when the check cannot
   * be made (too deep, too slow), `rate_limited` when too many checks wait.
   */
  async check(owner: string, schema: Record<string, unknown>, args: unknown, what: string, signal?: AbortSignal): Promise<readonly string[]> {
    const argsText = jsonWithinDepth(what, args);
    const text = SchemaValidator.text(schema);
    const reply = await this.#call(owner, { op: 'validate', schema: text, args: argsText }, what, signal);
    if (!reply.ok) throw PlatformError.invalid(`${what}: ${reply.phase === 'compile' ? 'the parameters schema does not compile: ' : ''}${reply.message}`);
    return reply.problems ?? [];
  }

  #call(owner: string, request: { op: string; schema: string; args?: string }, what: string, signal?: AbortSignal): Promise<Reply> {
    return this.#scheduler.run(
      owner,
      async () => {
        const worker = await this.#ready();
        return new Promise<Reply>((resolve, reject) => {
          const id = this.#nextId++;
          const timer = setTimeout(() => {
            this.#current = undefined;
            this.#kill();
            reject(PlatformError.invalid(`${what}: validation took longer than ${this.#timeoutMs} ms`));
          }, this.#timeoutMs);
          this.#current = {
            id,
            resolve: (reply) => {
              clearTimeout(timer);
              resolve(reply);
            },
          };
          try {
            worker.postMessage({ id, ...request });
          } catch (error) {
            clearTimeout(timer);
            this.#current = undefined;
            reject(PlatformError.invalid(`${what}: ${(error as Error).message}`));
          }
        });
      },
      signal,
    );
  }

  /** The worker, once it has loaded (its start is not counted in a call's time limit). */
  #ready(): Promise<Worker> {
    if (this.#starting) return this.#starting;
    const worker = new Worker(schemaWorkerUrl);
    worker.unref();
    let started = false;
    const starting = new Promise<Worker>((resolve, reject) => {
      const fail = (message: string) => {
        if (started) return;
        started = true;
        clearTimeout(startTimer);
        if (this.#starting === starting) this.#starting = undefined;
        void worker.terminate();
        reject(PlatformError.invalid(`parameters: the validator could not start: ${message}`));
      };
      const startTimer = setTimeout(() => fail(`it took longer than ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
      worker.on('message', (reply: Reply & { ready?: boolean }) => {
        if (reply.ready) {
          if (started) return;
          started = true;
          clearTimeout(startTimer);
          this.#worker = worker;
          resolve(worker);
        } else if (this.#worker === worker && this.#current?.id === reply.id) {
          const current = this.#current;
          this.#current = undefined;
          current.resolve(reply);
        }
      });
      const lost = (message: string) => {
        if (!started) return fail(message);
        if (this.#worker !== worker) return;
        this.#worker = undefined;
        this.#starting = undefined;
        const current = this.#current;
        this.#current = undefined;
        current?.resolve({ id: current.id, ok: false, phase: 'validate', message });
      };
      worker.on('error', (error) => lost(`the validator failed: ${error.message}`));
      worker.on('exit', () => lost('the validator stopped'));
    });
    this.#starting = starting;
    return starting;
  }

  #kill(): void {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#starting = undefined;
    void worker?.terminate();
  }

  async close(): Promise<void> {
    this.#scheduler.close(new PlatformError('aborted', 'The tool runner is closed'));
    const worker = this.#worker ?? (await this.#starting?.catch(() => undefined));
    this.#worker = undefined;
    this.#starting = undefined;
    await worker?.terminate();
  }
}
