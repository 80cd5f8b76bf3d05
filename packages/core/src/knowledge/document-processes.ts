import { availableParallelism } from 'node:os';
import { isPlatformError, PlatformError } from '../errors.js';
import { ProcessPool } from '../workers/process-pool.js';
import type { Chunk } from './chunk/index.js';
import { type DocumentLimitName, type DocumentLimits, exceededLimit, limitExceeded, resolveDocumentLimits } from './limits.js';
import type { ParseInput } from './parse/index.js';
import type { DocumentReader, DocumentReading, ReadHooks, ReadOptions } from './read-document.js';

export interface DocumentProcessesOptions {
  /** Limits of each document; time and memory are enforced on the process, the others inside it. Defaults: `DEFAULT_DOCUMENT_LIMITS`. */
  readonly limits?: DocumentLimits;
  /**
   * How an operator sets each limit, added to the message of a document over it, e.g.
   * `{ maxPages: '--max-document-pages' }`. Default `knowledge.limits.<name>`.
   */
  readonly limitHints?: Partial<Record<DocumentLimitName, string>>;
  /** Most reader processes at once, each reading one document at a time, besides the spare one. Default 2 (1 on a single core). */
  readonly processes?: number;
  /** The reader's entry module. Default: document-process.js next to this module (`.ts` in the sources). */
  readonly entry?: URL;
}

/**
 * Reader processes beyond `processes` for an owner with no document being read while every
 * process reads other owners' documents (see `ProcessPoolOptions.spare`): one user's slow
 * documents never make another user's wait for them.
 */
const SPARE_PROCESSES = 1;

const here = import.meta.url;
const DEFAULT_ENTRY = new URL(here.endsWith('.ts') ? './document-process.ts' : './document-process.js', here);

/**
 * Pools of reader processes, shared by every `DocumentProcesses` of this process with the same
 * entry, size and memory limit (several platforms in one process, as tests make, keep one set
 * of warm processes), with how many of them use each.
 */
const pools = new Map<string, { pool: ProcessPool; users: number }>();

/**
 * The default `DocumentReader`: documents are parsed and chunked in child processes (see
 * `ProcessPool`: one document per process, killed at the time or memory limit, a crash fails
 * only its document), never on this process's threads, so no document can stop, slow or
 * exhaust the service. A document over a limit fails with `payload_too_large`, its message
 * naming the limit and how to set it. Processes start on the first document and stay warm.
 */
export class DocumentProcesses implements DocumentReader {
  readonly #limits: Required<DocumentLimits>;
  readonly #hints: Partial<Record<DocumentLimitName, string>>;
  readonly #key: string;
  readonly #poolOptions: ConstructorParameters<typeof ProcessPool>[0];
  #pool: ProcessPool | undefined;
  readonly #reading = new Set<AbortController>();
  #closed = false;

  constructor(options: DocumentProcessesOptions = {}) {
    this.#limits = resolveDocumentLimits(options.limits);
    this.#hints = options.limitHints ?? {};
    const processes = options.processes ?? Math.min(2, availableParallelism());
    if (!Number.isInteger(processes) || processes < 1) throw PlatformError.invalid(`knowledge.documentProcesses must be a positive integer, got ${processes}`);
    const entry = options.entry ?? DEFAULT_ENTRY;
    this.#poolOptions = { entry, label: 'the document reader', processes, spare: SPARE_PROCESSES, memoryMb: this.#limits.memoryMb };
    this.#key = JSON.stringify([entry.href, processes, this.#limits.memoryMb]);
  }

  /** The ids of the reader processes running now (started on the first document). */
  get pids(): number[] {
    return this.#pool?.pids ?? [];
  }

  async read(input: ParseInput, options: ReadOptions, hooks: ReadHooks = {}): Promise<DocumentReading> {
    if (this.#closed) throw new PlatformError('aborted', 'The document readers were closed');
    hooks.signal?.throwIfAborted();
    const controller = new AbortController();
    const forward = () => controller.abort(hooks.signal?.reason);
    hooks.signal?.addEventListener('abort', forward, { once: true });
    this.#reading.add(controller);
    const { timeoutMs, memoryMb } = this.#limits;
    // The first chunks come with the result, any more before it, a few hundred per message (see
    // document-process.ts).
    const more: Chunk[] = [];
    try {
      const { chunkCount, ...rest } = (await this.#acquire().run({
        ...(hooks.owner !== undefined ? { owner: hooks.owner } : {}),
        message: { input: { fileName: input.fileName, ...(input.fileType ? { fileType: input.fileType } : {}) }, options, limits: this.#limits },
        attachment: input.bytes,
        timeoutMs,
        overTime: () => limitExceeded('timeoutMs', 'parsing and chunking the document did not end in time', timeoutMs, ' ms'),
        overMemory: () => limitExceeded('memoryMb', 'parsing and chunking the document needed more memory', memoryMb, ' MB'),
        signal: controller.signal,
        onProgress: (progress) => {
          if (progress === 'parsed') hooks.onParsed?.();
          else for (const chunk of (progress as { chunks: Chunk[] }).chunks) more.push(chunk);
        },
      })) as DocumentReading & { chunks: Chunk[]; chunkCount: number };
      const chunks = more.length === 0 ? rest.chunks : [...rest.chunks, ...more];
      if (chunks.length !== chunkCount) throw new PlatformError('internal', `the document reader sent ${chunks.length} of ${chunkCount} chunks`);
      return { ...rest, chunks };
    } catch (error) {
      throw this.#hinted(error);
    } finally {
      hooks.signal?.removeEventListener('abort', forward);
      this.#reading.delete(controller);
    }
  }

  /** Stops reading: this reader's documents in hand fail as aborted; the processes stop when no other reader uses them. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const controller of this.#reading) controller.abort(new PlatformError('aborted', 'The document readers were closed'));
    const entry = this.#pool ? pools.get(this.#key) : undefined;
    if (entry && --entry.users === 0) {
      pools.delete(this.#key);
      await entry.pool.close();
    }
  }

  #acquire(): ProcessPool {
    if (!this.#pool) {
      let entry = pools.get(this.#key);
      if (!entry) {
        entry = { pool: new ProcessPool(this.#poolOptions), users: 0 };
        pools.set(this.#key, entry);
      }
      entry.users++;
      this.#pool = entry.pool;
    }
    return this.#pool;
  }

  /** A limit error's message with how to set the limit. */
  #hinted(error: unknown): unknown {
    const limit = isPlatformError(error) ? exceededLimit(error) : undefined;
    if (!limit || !isPlatformError(error)) return error;
    const hint = this.#hints[limit] ?? `knowledge.limits.${limit}`;
    return new PlatformError(error.code, `${error.message} (${hint})`, error.details ? { details: error.details } : {});
  }
}
