import type { ResultOf } from '../../api/client';
import type { Source, ToolStep } from './answer-stream';
import { type ShownImage, storedImage } from './images';

type Message = ResultOf<'/api/chats/{chatId}/messages', 'get'>['messages'][number];

/** A turn as shown: the question with its images, or an answer with its tool steps, sources, reasoning and how it ended. */
export interface Turn {
  readonly role: 'user' | 'assistant';
  readonly text: string;
  readonly images?: readonly ShownImage[];
  /** The model's reasoning, apart from the answer (live answers only: it is not stored). */
  readonly reasoning?: string;
  /** Asked as JSON (`response_format`): the answer is shown as code. */
  readonly json?: boolean;
  readonly sources?: readonly Source[];
  readonly steps?: readonly ToolStep[];
  /** The question an answer answers (to open its citations). */
  readonly question?: string;
  readonly state?: 'streaming' | 'stopped' | 'failed';
  readonly error?: string;
}

/**
 * A chat's stored messages as turns, the way the answers looked while they streamed: each
 * question, then one answer made of everything the agent did for it (assistant messages with
 * tool calls, a tool message per result, the final text) and the sources it was given (kept on
 * the assistant message that ended the turn, so `[n]` opens them again). A question's images are
 * references (`parts`) to the chat's stored images, fetched when shown. A stored result does
 * not say whether the tool failed; the agent words every failure it feeds the model `Error: …`,
 * so that prefix marks a failed step (a project tool's result is JSON, so it never starts that
 * way).
 */
export function turnsOf(messages: readonly Message[], chatId: string): Turn[] {
  const turns: Turn[] = [];
  let question: string | undefined;
  const answer = (): Turn => {
    const last = turns.at(-1);
    if (last?.role === 'assistant') return last;
    const fresh: Turn = { role: 'assistant', text: '', steps: [], ...(question ? { question } : {}) };
    turns.push(fresh);
    return fresh;
  };
  const update = (patch: Partial<Turn>) => turns.splice(-1, 1, { ...answer(), ...patch });
  for (const m of messages) {
    if (m.role === 'user') {
      question = m.content ?? '';
      const images = (m.parts ?? []).flatMap((p) => (p.type === 'image' ? [storedImage(p, chatId)] : []));
      turns.push({ role: 'user', text: question, ...(images.length ? { images } : {}) });
    } else if (m.role === 'assistant') {
      const current = answer();
      const calls = (m.toolCalls ?? []).map((c): ToolStep => ({ id: c.id, name: c.name, arguments: c.arguments, state: 'running' }));
      update({ text: current.text + (m.content ?? ''), steps: [...(current.steps ?? []), ...calls], ...(m.sources?.length ? { sources: m.sources } : {}) });
    } else if (m.role === 'tool') {
      const current = answer();
      const content = m.content ?? '';
      const state = content.startsWith('Error: ') ? 'failed' : 'done';
      update({ steps: (current.steps ?? []).map((s) => (s.id === m.toolCallId && s.state === 'running' ? { ...s, state, content } : s)) });
    }
  }
  // A call still without a result was never run (the turn's last model call is offered no tools).
  const ended = turns.map((t) => (t.steps?.some((s) => s.state === 'running') ? { ...t, steps: t.steps.map((s) => (s.state === 'running' ? { ...s, state: 'no-result' as const } : s)) } : t));
  // An answer shows only when it has text or steps.
  return ended.filter((t) => t.role === 'user' || t.text || (t.steps?.length ?? 0) > 0);
}
