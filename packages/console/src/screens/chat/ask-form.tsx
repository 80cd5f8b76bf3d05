import { useRef, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../../api/client';
import { ErrorNote } from '../../components/ui';
import type { ResponseFormat, UserContent } from './answer-stream';
import { type Attachment, attach, IMAGE_TYPES, ImageList, imageFiles } from './images';
import { type FormatChoice, NO_FORMAT, ResponseFormatControl, responseFormatOf } from './response-format';

/** A question to send: its text, the images attached to it, and the answer's format. */
export interface Question {
  readonly text: string;
  readonly images: readonly Attachment[];
  readonly format: ResponseFormat | undefined;
}

/** A question as a user message's content: its text alone, or its text and each image as an `image_url` part with its `data:` URL. */
export function contentOf(q: Question): UserContent {
  if (q.images.length === 0) return q.text;
  return [...(q.text ? [{ type: 'text' as const, text: q.text }] : []), ...q.images.map((i) => ({ type: 'image_url' as const, image_url: { url: i.dataUrl } }))];
}

const IMAGE_PATH = /messages\.\d+\.content\.(\d+)\.image_url\.url: /g;

/**
 * A failed answer's error, with the service's message kept as it worded it when it is about the
 * question's images (a type it refuses, 400; past a size limit, 413): its path to a part of the
 * question (`messages.0.content.1.image_url.url: `) said as the image it names (`Image 1: `).
 */
export function imageError(error: unknown, q: Question): unknown {
  if (!(error instanceof ApiError) || !error.message.includes('.image_url.url: ')) return error;
  const first = q.text ? 1 : 0;
  return new Error(error.message.replace(IMAGE_PATH, (_, part: string) => `Image ${Number(part) - first + 1}: `));
}

/**
 * The question box: text (Enter sends, Shift+Enter adds a line), images attached with the picker
 * or pasted (sent as `data:` URLs; the service judges their type and size and its 400/413 is the
 * answer's error), the structured output of the answer, and Send or Stop.
 */
export function AskForm({ busy, onSend, onStop }: { busy: boolean; onSend: (q: Question) => void; onStop: () => void }) {
  const [text, setText] = useState('');
  const [images, setImages] = useState<readonly Attachment[]>([]);
  const [choice, setChoice] = useState<FormatChoice>(NO_FORMAT);
  const [formatError, setFormatError] = useState<string | undefined>();
  const [attachError, setAttachError] = useState<string | null>(null);
  const picker = useRef<HTMLInputElement>(null);

  const add = async (files: readonly File[]) => {
    setAttachError(null);
    try {
      const added = await Promise.all(files.map(attach));
      setImages((list) => [...list, ...added]);
    } catch (e) {
      setAttachError(messageOf(e));
    }
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const q = text.trim();
    if ((!q && images.length === 0) || busy) return;
    const { format, error } = responseFormatOf(choice);
    setFormatError(error);
    if (error) {
      document.getElementById('format-schema')?.focus();
      return;
    }
    onSend({ text: q, images, format });
    setText('');
    setImages([]);
  };

  return (
    <form class="ask" onSubmit={submit}>
      <div class="ask-main">
        <label for="question" class="visually-hidden">
          Question
        </label>
        <textarea
          id="question"
          rows={2}
          placeholder="Ask a question (Enter sends, Shift+Enter adds a line; paste an image to attach it)"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onPaste={(e) => {
            const files = imageFiles(e.clipboardData);
            if (files.length === 0) return;
            e.preventDefault();
            void add(files);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <ImageList images={images} onRemove={(i) => setImages((list) => list.filter((_, j) => j !== i))} />
        <ErrorNote message={attachError} />
        <div class="ask-tools">
          <input
            ref={picker}
            id="attach-images"
            type="file"
            class="visually-hidden"
            accept={IMAGE_TYPES.join(',')}
            multiple
            tabIndex={-1}
            aria-hidden="true"
            onChange={(e) => {
              const input = e.currentTarget;
              void add(Array.from(input.files ?? [])).then(() => {
                input.value = '';
              });
            }}
          />
          <button type="button" onClick={() => picker.current?.click()}>
            Attach images
          </button>
          <ResponseFormatControl choice={choice} error={formatError} onChange={setChoice} />
        </div>
      </div>
      {busy ? (
        <button type="button" class="danger" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" class="primary">
          Send
        </button>
      )}
    </form>
  );
}
