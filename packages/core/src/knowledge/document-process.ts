// Entry of a document reader process (a ProcessPool's process, see workers/process-pool.ts for
// the protocol and the limits of time and memory kept from outside): it loads the tokenizer,
// says `{ ready }`, then reads one document per `{ id, input, slices, options, limits }`
// message (its bytes came ahead as `slices` `{ id, slice }` messages),
// answering `{ id, progress: 'parsed' }` between parsing and chunking (when parsing took long
// enough for that to matter), the chunks beyond the first CHUNKS_PER_MESSAGE as
// `{ id, progress: { chunks } }` messages of at most that many, then `{ id, result }` (the
// DocumentReading with its first chunks), or `{ id, error }`. A small document is one message
// each way: most documents are small, and every message costs both processes. A crash outside that (an
// exception thrown later by a parser's callback) is reported as `{ id, crash }` before the
// process exits; the pool then starts another one when work needs it.
import { isPlatformError } from '../errors.js';
import type { DocumentLimits } from './limits.js';
import type { ParseInput } from './parse/index.js';
import { type ReadOptions, readDocument, warmUp } from './read-document.js';

interface Job {
  readonly id: number;
  /** The document without its bytes, which came ahead in `slices` messages. */
  readonly input: Omit<ParseInput, 'bytes'>;
  readonly slices: number;
  readonly options: ReadOptions;
  readonly limits: DocumentLimits;
}

/** Slices of the bytes of the next document (one document at a time). */
let slices: Uint8Array[] = [];

const send = (message: Record<string, unknown>, then?: () => void) => {
  if (process.connected) process.send?.(message, undefined, {}, () => then?.());
  else then?.();
};

/**
 * The service decodes each message on its main thread in one go: thousands of chunks in one
 * message held it for tens of milliseconds (megabytes of text, hundreds with a big document).
 */
const CHUNKS_PER_MESSAGE = 500;

/** Parsing that took less than this is not reported on its own (chunking follows at once). */
const PARSED_AFTER_MS = 50;

let current: number | undefined;

const crash = (error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  send({ id: current, crash: message }, () => process.exit(70));
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);
// The service is gone (or closed this reader): nothing is left to do.
process.on('disconnect', () => process.exit(0));

process.on('message', async (message: Job | { id: number; slice: Uint8Array }) => {
  if ('slice' in message) {
    slices.push(message.slice);
    return;
  }
  const job = message;
  const bytes = slices.length === 1 ? (slices[0] as Uint8Array) : Buffer.concat(slices);
  slices = [];
  current = job.id;
  try {
    const started = performance.now();
    const { chunks, ...rest } = await readDocument({ ...job.input, bytes }, job.options, job.limits, () => {
      if (performance.now() - started >= PARSED_AFTER_MS) send({ id: job.id, progress: 'parsed' });
    });
    for (let at = CHUNKS_PER_MESSAGE; at < chunks.length; at += CHUNKS_PER_MESSAGE) send({ id: job.id, progress: { chunks: chunks.slice(at, at + CHUNKS_PER_MESSAGE) } });
    send({ id: job.id, result: { ...rest, chunks: chunks.slice(0, CHUNKS_PER_MESSAGE), chunkCount: chunks.length } });
  } catch (error) {
    const wire = isPlatformError(error) ? { code: error.code, message: error.message, details: error.details } : { code: 'internal', message: error instanceof Error ? error.message : String(error) };
    send({ id: job.id, error: wire });
  } finally {
    current = undefined;
  }
});

warmUp();
send({ ready: true });
