import { useState } from 'preact/hooks';
import { ApiError, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { fieldErrors } from '../../components/field-errors';
import { ConfirmDialog, describedBy, ErrorNote, Field } from '../../components/ui';

export type Chat = ResultOf<'/api/chats', 'get'>['chats'][number];

/**
 * The open chat's heading with Rename (a form in place: `PATCH /api/chats/{chatId}`, the
 * service's 400 shown at the name) and Delete (after a confirmation that names the chat:
 * `DELETE /api/chats/{chatId}`). A new chat, not yet created, has the heading alone.
 */
export function ChatHeader({ chat, onRenamed, onDeleted }: { chat: Chat | undefined; onRenamed: (chat: Chat) => void; onDeleted: (chatId: string) => void }) {
  const api = useApi();
  const [name, setName] = useState<string | null>(null);
  const [nameError, setNameError] = useState<string | undefined>();
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<string | null>(null);

  if (!chat) return <h2 id="conversation-title">New chat</h2>;

  const rename = async (e: Event) => {
    e.preventDefault();
    if (name === null) return;
    try {
      const r = await api.call('patch', '/api/chats/{chatId}', { params: { chatId: chat.id }, body: { name } });
      setName(null);
      setNameError(undefined);
      onRenamed(r.chat);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) setNameError(fieldErrors(err, ['name']).name ?? err.text);
      else setNameError(messageOf(err));
    }
  };
  const remove = async () => {
    setDeleting(false);
    try {
      await api.call('delete', '/api/chats/{chatId}', { params: { chatId: chat.id } });
      onDeleted(chat.id);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <>
      {name === null ? (
        <div class="title-row conversation-head">
          <h2 id="conversation-title">{chat.name}</h2>
          <div class="actions">
            <button type="button" onClick={() => setName(chat.name)} aria-label={`Rename chat ${chat.name}`}>
              Rename
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)} aria-label={`Delete chat ${chat.name}`}>
              Delete
            </button>
          </div>
        </div>
      ) : (
        <form class="rename" onSubmit={rename} aria-labelledby="conversation-title">
          <h2 id="conversation-title" class="visually-hidden">
            Rename {chat.name}
          </h2>
          <Field id="chat-name" label="Chat name" error={nameError}>
            <input id="chat-name" value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} {...describedBy('chat-name', nameError)} />
          </Field>
          <div class="actions start">
            <button type="submit" class="primary">
              Save name
            </button>
            <button
              type="button"
              onClick={() => {
                setName(null);
                setNameError(undefined);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}
      <ErrorNote message={error} />
      <ConfirmDialog open={deleting} title="Delete chat?" confirm="Delete chat" onConfirm={remove} onClose={() => setDeleting(false)}>
        <p>
          Delete the chat <strong>{chat.name}</strong> with all its messages? This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
