import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../../api/client';
import { useApi } from '../../api/context';
import { Empty, ErrorNote, Loading } from '../../components/ui';
import { chatHref } from '../../router';
import { type PendingAnswer, pendingAnswer, setPendingAnswer } from '../../session';
import { type AnswerProgress, askInStream, readAnswer, resumeAnswer, type Source } from './answer-stream';
import { AskForm, contentOf, imageError, type Question } from './ask-form';
import { type Chat, ChatHeader } from './chat-header';
import { CitationPanel } from './citation';
import { type Turn, turnsOf } from './history';
import { TurnView } from './turn-view';
import { type Decision, decide, listWaiting, mergeWaiting, type Waiting } from './waiting';
import { WaitingList } from './waiting-list';

/**
 * The chat playground of a project: its chats listed, the selected chat's history, and a new
 * question answered with streamed tokens and numbered citations. Every answer is recorded to a
 * resumable stream of the chat, so a reload in the middle picks the answer up where it is; so is
 * the continuation of a turn paused for approval. The open chat is in the address
 * (`routeChatId`, `#/projects/{id}/chat/{chatId}`): a reload, Back or a link opens it again.
 */
export function ChatScreen({ projectId, routeChatId }: { projectId: string; routeChatId?: string | undefined }) {
  const api = useApi();
  const [chats, setChats] = useState<Chat[] | null>(null);
  const [chatId, setChatId] = useState<string | null>(null);
  /** The open chat, as soon as it is chosen (the state follows on the next render). */
  const opened = useRef<string | null>(null);
  const mounted = useRef(false);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<{ source: Source; question: string } | null>(null);
  const running = useRef<AbortController | null>(null);
  const [busy, setBusy] = useState(false);
  // What waits for the person: from the answer's chunks, and listed when a chat is opened.
  const [waiting, setWaiting] = useState<readonly Waiting[]>([]);
  const decided = useRef(new Set<string>());

  const loadChats = () =>
    api
      .call('get', '/api/chats', { query: { projectId, limit: 100 } })
      .then((r) => setChats(r.chats))
      .catch((e) => setError(messageOf(e)));

  const loadTurns = async (id: string): Promise<Turn[]> => {
    const { messages } = await api.call('get', '/api/chats/{chatId}/messages', { params: { chatId: id } });
    return turnsOf(messages, id);
  };

  /** Opens a chat, in the address too (a new history entry: Back goes to the chat before). */
  const remember = (id: string | null) => {
    opened.current = id;
    setChatId(id);
    const href = chatHref(projectId, id);
    if (location.hash !== href) location.hash = href;
  };

  /** Streams an answer into the last turn, whichever way it comes (asked now, or resumed). */
  const follow = async (q: string, run: (signal: AbortSignal, onProgress: (a: AnswerProgress) => void) => Promise<AnswerProgress>, json = false, abort = new AbortController()) => {
    running.current = abort;
    setBusy(true);
    const show = (patch: Partial<Turn> | ((turn: Turn) => Partial<Turn>)) =>
      setTurns((list) => {
        const last = list.at(-1) as Turn;
        return [...list.slice(0, -1), { ...last, ...(typeof patch === 'function' ? patch(last) : patch) }];
      });
    setTurns((list) => [...list, { role: 'assistant', text: '', question: q, state: 'streaming', ...(json ? { json } : {}) }]);
    const shown = (a: AnswerProgress) => {
      if (a.waiting.length) setWaiting((list) => mergeWaiting(list, a.waiting, decided.current));
      return { text: a.text, sources: a.sources, steps: a.steps, ...(a.reasoning ? { reasoning: a.reasoning } : {}) };
    };
    try {
      const answer = await run(abort.signal, (a) => show(shown(a)));
      show({ ...shown(answer), state: undefined });
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

  /** The tool calls waiting for approval: their steps say so. */
  const held = new Set(waiting.flatMap((w) => (w.kind === 'tool' ? [w.callId] : [])));

  const loadWaitingOf = (id: string) =>
    listWaiting(api, id)
      .then((list) => setWaiting(list.filter((w) => !decided.current.has(w.id))))
      .catch((e) => setError(messageOf(e)));

  /**
   * Decides what waits: a question's answer goes to its tool (the answer's stream, still open,
   * goes on); the last decision of a paused turn streams the continued turn into the chat.
   */
  const onDecide = async (item: Waiting, decision: Decision) => {
    const abort = new AbortController();
    const question = turns.findLast((t) => t.role === 'user')?.text ?? '';
    // A tool decision may be the pause's last: the continuation it answers is recorded in a
    // stream of the chat, remembered until it ends, so a reload during it follows it again.
    const chat = item.kind === 'tool' ? chatId : null;
    const streamId = chat ? (await api.call('post', '/api/chats/{chatId}/streams', { params: { chatId: chat }, body: { chatId: chat } })).stream.id : undefined;
    if (chat && streamId) setPendingAnswer({ projectId, chatId: chat, streamId, question, continues: { approvalId: item.id, callId: item.callId } });
    let res: Response | null;
    try {
      res = await decide(api, item.id, decision, abort.signal, streamId);
    } catch (e) {
      if (streamId) setPendingAnswer(null);
      throw e;
    }
    decided.current.add(item.id);
    setWaiting((list) => list.filter((w) => w.id !== item.id));
    if (res) await follow(question, (signal, onProgress) => readAnswer(res, onProgress, signal), false, abort);
    else if (streamId) setPendingAnswer(null);
  };

  /** A reload during an answer: the chat so far, then the answer's stream replayed and followed. */
  const resume = async (pending: PendingAnswer) => {
    remember(pending.chatId);
    void loadWaitingOf(pending.chatId);
    const list = await loadTurns(pending.chatId);
    if (pending.continues) {
      // The continuation of a paused turn comes after it. Stored already (the decided call has
      // its result), or never decided (the reload came before the decision): nothing to follow.
      const { approvalId, callId } = pending.continues;
      const stored = list.some((t) => t.steps?.some((step) => step.id === callId && (step.state === 'done' || step.state === 'failed')));
      const decidedNow = !stored && (await api.call('get', '/api/v1/approvals/{id}', { params: { id: approvalId } })).approval.state !== 'pending';
      setTurns(list);
      if (!decidedNow) return setPendingAnswer(null);
    } else {
      // The stream replays the answer from its start: drop it if it was stored meanwhile.
      // The question is stored with its answer, at the end: show it until then.
      const shown = list.at(-1)?.role === 'assistant' ? list.slice(0, -1) : list;
      const asked = shown.at(-1)?.role === 'user' && shown.at(-1)?.text === pending.question;
      setTurns(asked ? shown : [...shown, { role: 'user', text: pending.question }]);
    }
    return follow(pending.question, (signal, onProgress) => resumeAnswer(api, pending.chatId, pending.streamId, signal, onProgress));
  };

  useEffect(() => {
    void loadChats();
    const pending = pendingAnswer();
    if (pending && pending.projectId === projectId) void resume(pending).catch((e) => setError(messageOf(e)));
    else if (routeChatId) void select(routeChatId);
    return () => running.current?.abort();
  }, [projectId]);

  // The address changed (Back, Forward, a link, the Chat tab): open the chat it names.
  useEffect(() => {
    if (!mounted.current) {
      mounted.current = true;
      return;
    }
    if ((routeChatId ?? null) !== opened.current) void select(routeChatId ?? null);
  }, [routeChatId]);

  const select = async (id: string | null) => {
    running.current?.abort();
    setOpen(null);
    remember(id);
    setError(null);
    setWaiting([]);
    try {
      setTurns(id ? await loadTurns(id) : []);
      if (id) await loadWaitingOf(id);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const send = async (q: Question) => {
    setError(null);
    let id = chatId;
    try {
      if (!id) {
        id = (await api.call('post', '/api/chats', { body: { projectId, name: (q.text || q.images.map((i) => i.name).join(', ')).slice(0, 60) } })).chat.id;
        remember(id);
        void loadChats();
      }
    } catch (err) {
      return setError(messageOf(err));
    }
    const chat = id;
    setTurns((list) => [...list, { role: 'user', text: q.text, ...(q.images.length ? { images: q.images } : {}) }]);
    await follow(
      q.text,
      (signal, onProgress) =>
        askInStream(api, {
          projectId,
          chatId: chat,
          content: contentOf(q),
          responseFormat: q.format,
          signal,
          onProgress,
          onStream: (streamId) => setPendingAnswer({ projectId, chatId: chat, streamId, question: q.text }),
        }).catch((e: unknown) => {
          throw imageError(e, q);
        }),
      q.format !== undefined,
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
            <TurnView key={i} turn={t} held={held} onOpen={(source, question) => setOpen({ source, question })} />
          ))}
        </ol>
        <WaitingList items={waiting} onDecide={onDecide} />
        {open ? <CitationPanel question={open.question} source={open.source} onClose={() => setOpen(null)} /> : null}
        <AskForm busy={busy} onSend={(q) => void send(q)} onStop={() => running.current?.abort()} />
      </section>
    </div>
  );
}
