import { type Api, fillPath, type ResultOf } from '../../api/client';
import { sseEvents } from '../../api/sse';

/** A knowledge chunk the answer was given, numbered as the answer cites it. */
export type Source = ResultOf<'/api/v1/ai/chat/completions', 'post'>['sources'][number];

/** What the answer so far is: its text and sources, told on every chunk. */
export interface AnswerProgress {
  readonly text: string;
  readonly sources: readonly Source[];
}

interface Chunk {
  sources?: Source[];
  choices?: { delta?: { content?: string | null } }[];
  error?: { message?: string };
}

/**
 * Reads an answer in OpenAI's chunk format (a completion's SSE answer, or the replay of its
 * resumable stream) until `data: [DONE]`, calling `onProgress` as the text grows. A mid-stream
 * `{ error }` chunk throws with the service's message. Resolves with the whole answer.
 */
export async function readAnswer(res: Response, onProgress: (answer: AnswerProgress) => void, signal?: AbortSignal): Promise<AnswerProgress> {
  let text = '';
  let sources: readonly Source[] = [];
  for await (const event of sseEvents(res, signal)) {
    if (event.data === '[DONE]') break;
    const chunk = JSON.parse(event.data) as Chunk;
    if (chunk.error) throw new Error(chunk.error.message ?? 'The answer failed');
    if (chunk.sources) sources = chunk.sources;
    text += chunk.choices?.[0]?.delta?.content ?? '';
    onProgress({ text, sources });
  }
  if (signal?.aborted) throw new DOMException('Stopped', 'AbortError');
  return { text, sources };
}

/**
 * Asks the project's agent in a chat, recording the answer into a new resumable stream of the
 * chat first: `onStream` gets the stream id before any token, so the caller can remember it and
 * resume after a reload (`resumeAnswer`).
 */
export async function askInStream(
  api: Api,
  opts: { projectId: string; chatId: string; question: string; signal: AbortSignal; onStream: (streamId: string) => void; onProgress: (answer: AnswerProgress) => void },
): Promise<AnswerProgress> {
  const { stream } = await api.call('post', '/api/chats/{chatId}/streams', { params: { chatId: opts.chatId }, body: { chatId: opts.chatId } });
  opts.onStream(stream.id);
  const res = await api.fetch('post', '/api/v1/ai/chat/completions', {
    body: { model: opts.projectId, chatId: opts.chatId, streamId: stream.id, stream: true, messages: [{ role: 'user', content: opts.question }] },
    signal: opts.signal,
  });
  return readAnswer(res, opts.onProgress, opts.signal);
}

/** Replays a recorded answer from its start and follows it live until it ends. */
export async function resumeAnswer(api: Api, chatId: string, streamId: string, signal: AbortSignal, onProgress: (answer: AnswerProgress) => void): Promise<AnswerProgress> {
  const res = await api.fetch('get', fillPath('/api/chats/{chatId}/streams/{streamId}', { chatId, streamId }), { signal });
  return readAnswer(res, onProgress, signal);
}
