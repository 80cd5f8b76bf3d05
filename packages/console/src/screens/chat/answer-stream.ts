import { type Api, type BodyOf, fillPath, type ResultOf } from '../../api/client';
import type { paths } from '../../api/schema';
import { sseEvents } from '../../api/sse';
import { type Waiting, waitingOf } from './waiting';

/** A knowledge chunk the answer was given, numbered as the answer cites it. */
export type Source = ResultOf<'/api/v1/ai/chat/completions', 'post'>['sources'][number];

/** A chunk of a completion's SSE answer, as the API's contract documents it. */
type StreamChunk = paths['/api/v1/ai/chat/completions']['post']['responses'][200]['content']['text/event-stream'];
/** The tool-step members of a chunk (docs/API.md, "Tool steps in a completion stream"). */
type ToolStepChunk = Partial<Pick<StreamChunk, 'toolCall' | 'toolResult' | 'approval'>>;

/**
 * A tool the agent ran during an answer (one of the project's tools, or an MCP server's as
 * `mcp__<server>__<tool>`): running until its result comes, then done or failed; a call held
 * for a person's approval is waiting until it is decided.
 */
export interface ToolStep {
  readonly id: string;
  readonly name: string;
  /** The arguments as the model wrote them (JSON text). */
  readonly arguments: string;
  /**
   * `no-result`: a call whose result never came (a stored call the step limit left unanswered,
   * or an answer stopped or failed while the tool ran).
   */
  readonly state: 'running' | 'waiting' | 'done' | 'failed' | 'no-result';
  /** What the model was given back: the result, or `Error: …`. */
  readonly content?: string;
}

/** What the answer so far is: its text, sources and tool steps, and the model's reasoning apart from the text, told on every chunk. */
export interface AnswerProgress {
  readonly text: string;
  readonly sources: readonly Source[];
  readonly steps: readonly ToolStep[];
  /** `reasoning_content` (where the provider streams reasoning): never part of `text`. */
  readonly reasoning: string;
  /** Tool calls waiting for the person's approval (the answer paused) and MCP servers' questions. */
  readonly waiting: readonly Waiting[];
}

type CompletionBody = NonNullable<BodyOf<'/api/v1/ai/chat/completions', 'post'>>;
/** What a user message's content may be: text, or text and `image_url` parts. */
export type UserContent = Extract<CompletionBody['messages'][number], { role: 'user' }>['content'];
/** `response_format` of a completion request (none: the answer is free text). */
export type ResponseFormat = NonNullable<CompletionBody['response_format']>;

/** A chunk, or the `{ error }` object that ends a failed stream. */
type Chunk = Partial<StreamChunk> & { error?: { message?: string } };

/**
 * `steps` with a chunk's tool call added, a call held for approval marked waiting (the
 * `approval` names it by `callId`), or a result given to the call it answers.
 */
export function withStep(steps: readonly ToolStep[], chunk: ToolStepChunk): readonly ToolStep[] {
  if (chunk.toolCall) return [...steps, { ...chunk.toolCall, state: 'running' }];
  const held = chunk.approval;
  if (held) {
    const waiting = { id: held.callId, name: held.tool, arguments: held.arguments, state: 'waiting' } as const;
    return steps.some((s) => s.id === held.callId) ? steps.map((s) => (s.id === held.callId ? { ...s, state: 'waiting' } : s)) : [...steps, waiting];
  }
  const result = chunk.toolResult;
  if (!result) return steps;
  const answered = (s: ToolStep) => s.id === result.id && (s.state === 'running' || s.state === 'waiting');
  const done = { state: result.isError ? 'failed' : 'done', content: result.content } as const;
  return steps.some(answered) ? steps.map((s) => (answered(s) ? { ...s, ...done } : s)) : [...steps, { id: result.id, name: result.name, arguments: '', ...done }];
}

/**
 * Reads an answer in OpenAI's chunk format (a completion's SSE answer, or the replay of its
 * resumable stream) until `data: [DONE]`, calling `onProgress` as the text grows. A mid-stream
 * `{ error }` chunk throws with the service's message; `toolCall` / `toolResult` chunks become
 * the answer's steps; `approval` / `elicitation` chunks what waits for the person. Resolves with the whole answer.
 */
export async function readAnswer(res: Response, onProgress: (answer: AnswerProgress) => void, signal?: AbortSignal): Promise<AnswerProgress> {
  let text = '';
  let sources: readonly Source[] = [];
  let steps: readonly ToolStep[] = [];
  let reasoning = '';
  let waiting: readonly Waiting[] = [];
  for await (const event of sseEvents(res, signal)) {
    if (event.data === '[DONE]') break;
    const chunk = JSON.parse(event.data) as Chunk;
    if (chunk.error) throw new Error(chunk.error.message ?? 'The answer failed');
    if (chunk.sources) sources = chunk.sources;
    steps = withStep(steps, chunk);
    const asks = waitingOf(chunk);
    if (asks) waiting = [...waiting, asks];
    const delta = chunk.choices?.[0]?.delta;
    text += delta?.content ?? '';
    reasoning += delta?.reasoning_content ?? '';
    onProgress({ text, sources, steps, reasoning, waiting });
  }
  if (signal?.aborted) throw new DOMException('Stopped', 'AbortError');
  return { text, sources, steps, reasoning, waiting };
}

/**
 * Asks the project's agent in a chat, recording the answer into a new resumable stream of the
 * chat first: `onStream` gets the stream id before any token, so the caller can remember it and
 * resume after a reload (`resumeAnswer`).
 */
export async function askInStream(
  api: Api,
  opts: {
    projectId: string;
    chatId: string;
    content: UserContent;
    responseFormat?: ResponseFormat | undefined;
    signal: AbortSignal;
    onStream: (streamId: string) => void;
    onProgress: (answer: AnswerProgress) => void;
  },
): Promise<AnswerProgress> {
  const { stream } = await api.call('post', '/api/chats/{chatId}/streams', { params: { chatId: opts.chatId }, body: { chatId: opts.chatId } });
  opts.onStream(stream.id);
  const res = await api.fetch('post', '/api/v1/ai/chat/completions', {
    body: {
      model: opts.projectId,
      chatId: opts.chatId,
      streamId: stream.id,
      stream: true,
      messages: [{ role: 'user', content: opts.content }],
      ...(opts.responseFormat ? { response_format: opts.responseFormat } : {}),
    } satisfies CompletionBody,
    signal: opts.signal,
  });
  return readAnswer(res, opts.onProgress, opts.signal);
}

/** Replays a recorded answer from its start and follows it live until it ends. */
export async function resumeAnswer(api: Api, chatId: string, streamId: string, signal: AbortSignal, onProgress: (answer: AnswerProgress) => void): Promise<AnswerProgress> {
  const res = await api.fetch('get', fillPath('/api/chats/{chatId}/streams/{streamId}', { chatId, streamId }), { signal });
  return readAnswer(res, onProgress, signal);
}
