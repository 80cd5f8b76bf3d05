import { PlatformError } from '../errors.js';

const MiB = 1024 * 1024;

/**
 * Bounds on what is read from the servers a platform calls: model servers, MCP servers, the
 * local model runtime, vector stores and embedding servers, any of which a user may choose. Each
 * is enforced while reading (see `BodyLimit`): past it the upstream is cut off and the call
 * fails with `upstream_error` naming the limit and the setting that raises it. Bytes, all of
 * them; every field has a default ({@link DEFAULT_UPSTREAM_LIMITS}).
 */
export interface UpstreamLimits {
  /**
   * One answer of a model server: a body that is not streamed (a models list, an error), one
   * event of a streamed answer, and the text and tool calls (names, ids, arguments) a streamed
   * answer adds up to. Default 4 MiB.
   */
  readonly modelAnswerBytes?: number;
  /**
   * One message an agent turn stores in a chat (and a recorded stream keeps): the model's text
   * and tool calls of one step, one tool's result. A step past it fails the turn; a tool result
   * past it reaches the model as the tool's error. Default 1 MiB.
   */
  readonly messageBytes?: number;
  /** One JSON-RPC message of an MCP server (an HTTP answer's body, one event of an event stream), and one server's whole tool list. Default 4 MiB. */
  readonly mcpMessageBytes?: number;
  /** The result of one MCP tool call, as the agent gets it (its text); past it the call is the tool's error. Default 1 MiB, as a project tool's result. */
  readonly mcpToolResultBytes?: number;
  /** One answer of the local model runtime (its model list). Default 1 MiB. */
  readonly runtimeAnswerBytes?: number;
  /** One answer of a third-party vector store. Default 16 MiB. */
  readonly vectorAnswerBytes?: number;
  /** One answer of an embedding server (a batch of vectors). Default 16 MiB. */
  readonly embeddingsAnswerBytes?: number;
}

export type UpstreamLimitName = keyof UpstreamLimits;

export const DEFAULT_UPSTREAM_LIMITS: Readonly<Required<UpstreamLimits>> = {
  modelAnswerBytes: 4 * MiB,
  messageBytes: 1 * MiB,
  mcpMessageBytes: 4 * MiB,
  mcpToolResultBytes: 1 * MiB,
  runtimeAnswerBytes: 1 * MiB,
  vectorAnswerBytes: 16 * MiB,
  embeddingsAnswerBytes: 16 * MiB,
};

/** The limits with every field filled in from the defaults; throws `invalid_request` for one that is not a positive integer. */
export function resolveUpstreamLimits(limits: UpstreamLimits = {}): Required<UpstreamLimits> {
  const resolved = { ...DEFAULT_UPSTREAM_LIMITS };
  for (const name of Object.keys(DEFAULT_UPSTREAM_LIMITS) as UpstreamLimitName[]) {
    const value = limits[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw PlatformError.invalid(`upstreamLimits.${name} must be a positive integer, got ${value}`);
    resolved[name] = value;
  }
  return resolved;
}

/** Bytes of `text` as UTF-8 (what it takes on the wire and in storage), without encoding it. */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** One limit as an adapter takes it: the bytes, and the setting that raises it (named in the error). */
export interface ByteLimit {
  readonly bytes: number;
  /** e.g. `--max-model-answer` (the server's flag), or the option's name for a library user. */
  readonly setting: string;
}

/**
 * Counts the bytes of text that add up to one thing (a streamed answer, a message) and throws
 * `tooLarge()` once they pass `limit`. What is counted is never joined first: the count comes
 * from each piece as it arrives.
 */
export function byteBudget(limit: number, tooLarge: () => PlatformError): { add(text: string): void; addBytes(bytes: number): void; readonly used: number } {
  let used = 0;
  const addBytes = (bytes: number) => {
    used += bytes;
    if (used > limit) throw tooLarge();
  };
  return {
    add: (text: string) => addBytes(utf8Bytes(text)),
    addBytes,
    get used() {
      return used;
    },
  };
}
