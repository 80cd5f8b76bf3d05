import { WorkerClient } from './worker-client.js';

/** A text as it is sent to the server, and its cl100k tokens. */
export interface Clipped {
  readonly text: string;
  /** Tokens of `text`, at most: see {@link TokenCounter.clip}. */
  readonly tokens: number;
}

export interface ClipOptions {
  /** Tokens of one text; longer texts are cut to this. */
  readonly maxInputTokens: number;
  /**
   * Tokens of all the texts of the call above which counts matter (the caller splits its
   * requests by them). Below it, by their UTF-8 length alone, no text is counted.
   */
  readonly maxTotalTokens: number;
  readonly signal?: AbortSignal | undefined;
  /** `query`: served before queued bulk work. Default `bulk`. */
  readonly kind?: 'query' | 'bulk';
}

/** Counts and cuts texts with cl100k_base, on a worker thread shared by every openai embedder of the process. */
export interface TokenCounter {
  /**
   * Each text cut to at most `maxInputTokens` cl100k tokens, with its tokens; blank texts
   * become one space (servers reject ""). A cl100k token is at least one UTF-8 byte, so when
   * every text has at most `maxInputTokens` bytes and all together at most `maxTotalTokens`, no
   * text can need cutting nor a count decide anything: the texts come back as they are, without
   * the worker, with their byte length as `tokens` (at least their tokens). Otherwise the counts
   * are exact (a cut text counts `maxInputTokens`), from the worker. Rejects with
   * `PlatformError('internal')` naming the token counter when its worker fails or dies (the next
   * call starts a new one).
   */
  clip(texts: readonly string[], options: ClipOptions): Promise<Clipped[]>;
  /** Lets go of the shared worker: the last holder's close stops it. Idempotent; a later `clip` holds it again. */
  close(): Promise<void>;
}

interface TokenInput {
  readonly text: string;
  readonly max: number;
}

interface TokenOutput {
  readonly tokens: number;
  /** Only when the text was cut (or blank): an unchanged text does not travel back. */
  readonly text?: string;
}

/**
 * The one worker of the process, started by the first text that needs counting (gpt-tokenizer
 * and its BPE tables, a few MB, live only in that thread) and stopped when the last embedder
 * that used it closes. An idle worker is unref'd: it never keeps the process alive.
 */
let shared: WorkerClient<TokenInput, TokenOutput> | undefined;
const holders = new Set<object>();

const LABEL = "The openai embedder's token counter";
const check = (output: TokenOutput): string | undefined =>
  Number.isInteger(output?.tokens) && output.tokens >= 1 && (output.text === undefined || typeof output.text === 'string') ? undefined : 'an answer that is not a token count';

const BLANK: Clipped = { text: ' ', tokens: 1 };

/** A handle on the shared token counter (one per embedder, so that closing one embedder does not stop the others' counting). */
export function tokenCounter(): TokenCounter {
  const holder = {};
  return {
    async clip(texts, { maxInputTokens, maxTotalTokens, signal, kind = 'bulk' }) {
      const bytes = texts.map((t) => Buffer.byteLength(t, 'utf8'));
      let total = 0;
      for (const b of bytes) total += Math.max(1, b);
      if (total <= maxTotalTokens && bytes.every((b) => b <= maxInputTokens)) {
        return texts.map((text, i) => (text.trim() === '' ? BLANK : { text, tokens: bytes[i] as number }));
      }
      const counted = texts.flatMap((text, i) => (text.trim() === '' ? [] : [i]));
      holders.add(holder);
      shared ??= new WorkerClient<TokenInput, TokenOutput>({
        // token-worker.js sits next to this module in src and in dist (a tsup entry of its own).
        url: new URL('./token-worker.js', import.meta.url),
        label: LABEL,
        batchSize: 64,
        check,
        length: (input) => input.text.length,
      });
      const outputs = await shared.run(
        counted.map((i) => ({ text: texts[i] as string, max: maxInputTokens })),
        signal,
        kind,
      );
      const clipped: Clipped[] = texts.map(() => BLANK);
      for (const [k, i] of counted.entries()) {
        const output = outputs[k] as TokenOutput;
        clipped[i] = { text: output.text ?? (texts[i] as string), tokens: output.tokens };
      }
      return clipped;
    },
    async close() {
      if (!holders.delete(holder) || holders.size > 0) return;
      const pool = shared;
      shared = undefined;
      await pool?.close();
    },
  };
}
