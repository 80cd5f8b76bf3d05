import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../../api/client';
import { useApi } from '../../api/context';
import { Empty, ErrorNote, Loading } from '../../components/ui';
import { pendingAnswer, setPendingAnswer } from '../../session';
import { type AnswerProgress, askInStream, resumeAnswer, type Source } from './answer-stream';
import { type Chat, ChatHeader } from './chat-header';
import { CitationPanel, CitedText } from './citation';
import { type Turn, turnsOf } from './history';
import { ToolSteps } from './tool-steps';

/**
 * The chat playground of a project: its chats listed, the selected chat's history, and a new
 * question answered with streamed tokens and numbered citations. Every answer is recorded to a
 * resumable stream of the chat, so a reload in the middle picks the answer up where it is.
 */
export function ChatScreen({ projectId }: { projectId: string }) {
  const api = useApi();
  const [chats, setChats] = useState<Chat[] | null>(null);
  const [chatId, setChatId] = useState<string | null>(null);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [question, setQuestion] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<{ source: Source; question: string } | null>(null);
  const running = useRef<AbortController | null>(null);
  const [busy, setBusy] = useState(false);

  const loadChats = () =>
    api
      .call('get', '/api/chats', { query: { projectId, limit: 100 } })
      .then((r) => setChats(r.chats))
      .catch((e) => setError(messageOf(e)));

  const loadTurns = async (id: string): Promise<Turn[]> => {
    const { messages } = await api.call('get', '/api/chats/{chatId}/messages', { params: { chatId: id } });
    return turnsOf(messages);
  };

  /** Streams an answer into the last turn, whichever way it comes (asked now, or resumed). */
  const follow = async (q: string, run: (signal: AbortSignal, onProgress: (a: AnswerProgress) => void) => Promise<AnswerProgress>) => {
    const abort = new AbortController();
    running.current = abort;
    setBusy(true);
    const show = (patch: Partial<Turn> | ((turn: Turn) => Partial<Turn>)) =>
      setTurns((list) => {
        const last = list.at(-1) as Turn;
        return [...list.slice(0, -1), { ...last, ...(typeof patch === 'function' ? patch(last) : patch) }];
      });
    setTurns((list) => [...list, { role: 'assistant', text: '', question: q, state: 'streaming' }]);
    try {
      const answer = await run(abort.signal, (a) => show({ text: a.text, sources: a.sources, steps: a.steps }));
      show({ text: answer.text, sources: answer.sources, steps: answer.steps, state: undefined });
      setPendingAnswer(null);
    } catch (e) {
      // Stopped: the request is aborted and the answer no longer followed or resumed.
      setPendingAnswer(null);
      const ended = abort.signal.aborted ? { state: 'stopped' as const } : { state: 'failed' as const, error: messageOf(e) };
      // A step still running when the answer ended here has no result to show.
      show((turn) => ({ ...ended, steps: turn.steps?.map((s) => (s.state === 'running' ? { ...s, state: 'no-result' as const } : s)) }));
    } finally {
      running.current = null;
      setBusy(false);
    }
  };

  useEffect(() => {
    void loadChats();
    const pending = pendingAnswer();
    if (pending && pending.projectId === projectId) {
      // A reload during an answer: show the chat so far, then replay the answer's stream.
      setChatId(pending.chatId);
      void loadTurns(pending.chatId)
        .then((list) => {
          // The stream replays the answer from its start: drop it if it was stored meanwhile.
          // The question is stored with its answer, at the end: show it until then.
          const shown = list.at(-1)?.role === 'assistant' ? list.slice(0, -1) : list;
          const asked = shown.at(-1)?.role === 'user' && shown.at(-1)?.text === pending.question;
          setTurns(asked ? shown : [...shown, { role: 'user', text: pending.question }]);
          return follow(pending.question, (signal, onProgress) => resumeAnswer(api, pending.chatId, pending.streamId, signal, onProgress));
        })
        .catch((e) => setError(messageOf(e)));
    }
    return () => running.current?.abort();
  }, [projectId]);

  const select = async (id: string | null) => {
    running.current?.abort();
    setOpen(null);
    setChatId(id);
    setError(null);
    try {
      setTurns(id ? await loadTurns(id) : []);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const send = async (e: Event) => {
    e.preventDefault();
    const q = question.trim();
    if (!q || busy) return;
    setError(null);
    setQuestion('');
    let id = chatId;
    try {
      if (!id) {
        id = (await api.call('post', '/api/chats', { body: { projectId, name: q.slice(0, 60) } })).chat.id;
        setChatId(id);
        void loadChats();
      }
    } catch (err) {
      return setError(messageOf(err));
    }
    const chat = id;
    setTurns((list) => [...list, { role: 'user', text: q }]);
    await follow(q, (signal, onProgress) =>
      askInStream(api, { projectId, chatId: chat, question: q, signal, onProgress, onStream: (streamId) => setPendingAnswer({ projectId, chatId: chat, streamId, question: q }) }),
    );
  };

  return (
    <div class="chat">
      <nav class="card chats" aria-labelledby="chats-title">
        <h2 id="chats-title">Chats</h2>
        <button type="button" class="primary" onClick={() => select(null)}>
          New chat
        </button>
        {chats === null && !error ? <Loading what="chats" /> : null}
        {chats && chats.length === 0 ? <p class="muted">No chats yet: ask something to start one.</p> : null}
        <ul>
          {chats?.map((c) => (
            <li key={c.id}>
              <button type="button" class="link" title={c.name} aria-current={c.id === chatId ? 'true' : undefined} onClick={() => select(c.id)}>
                {c.name}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <section class="card conversation" aria-labelledby="conversation-title">
        <ChatHeader
          key={chatId ?? 'new'}
          chat={chats?.find((c) => c.id === chatId)}
          onRenamed={(chat) => setChats((list) => list?.map((c) => (c.id === chat.id ? chat : c)) ?? null)}
          onDeleted={(id) => {
            setChats((list) => list?.filter((c) => c.id !== id) ?? null);
            void select(null);
          }}
        />
        <ErrorNote message={error} />
        {turns.length === 0 ? <Empty title="Ask the agent">It answers from this project's knowledge and tools, and cites its sources as [1], [2]…</Empty> : null}
        <ol class="turns" aria-live="polite">
          {turns.map((t, i) => (
            <li key={i} class={`turn ${t.role}`} data-state={t.state}>
              <span class="visually-hidden">{t.role === 'user' ? 'You:' : 'Agent:'}</span>
              {t.steps ? <ToolSteps steps={t.steps} /> : null}
              <div class="text">{t.role === 'assistant' ? <CitedText text={t.text} sources={t.sources ?? []} onOpen={(source) => setOpen({ source, question: t.question ?? '' })} /> : t.text}</div>
              {t.state === 'streaming' ? <span class="muted">Answering…</span> : null}
              {t.state === 'stopped' ? <span class="muted">Stopped</span> : null}
              {t.error ? <ErrorNote message={t.error} /> : null}
              {t.sources && t.sources.length > 0 ? (
                <ul class="sources" aria-label="Sources">
                  {t.sources.map((s) => (
                    <li key={s.index}>
                      <button type="button" class="link" onClick={() => setOpen({ source: s, question: t.question ?? '' })}>
                        [{s.index}] {s.fileName}
                      </button>
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ol>
        {open ? <CitationPanel question={open.question} source={open.source} onClose={() => setOpen(null)} /> : null}
        <form class="ask" onSubmit={send}>
          <label for="question" class="visually-hidden">
            Question
          </label>
          <textarea
            id="question"
            rows={2}
            placeholder="Ask a question (Enter sends, Shift+Enter adds a line)"
            value={question}
            onInput={(e) => setQuestion(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
          />
          {busy ? (
            <button type="button" class="danger" onClick={() => running.current?.abort()}>
              Stop
            </button>
          ) : (
            <button type="submit" class="primary">
              Send
            </button>
          )}
        </form>
      </section>
    </div>
  );
}
