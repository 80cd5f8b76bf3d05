import { ErrorNote } from '../../components/ui';
import type { Source } from './answer-stream';
import { CitedText } from './citation';
import type { Turn } from './history';
import { ImageList } from './images';
import { pretty, ToolSteps } from './tool-steps';

/**
 * One turn of the transcript: a question with its images, or an answer with its tool steps, the
 * model's reasoning (collapsed, apart from the answer), the text with its `[n]` citations (code
 * when asked as JSON, indented once whole), how it ended and its sources.
 */
export function TurnView({ turn: t, held, onOpen }: { turn: Turn; held: ReadonlySet<string>; onOpen: (source: Source, question: string) => void }) {
  const open = (source: Source) => onOpen(source, t.question ?? '');
  return (
    <li class={`turn ${t.role}`} data-state={t.state}>
      <span class="visually-hidden">{t.role === 'user' ? 'You:' : 'Agent:'}</span>
      {t.steps ? <ToolSteps steps={t.steps} held={held} /> : null}
      {t.reasoning ? (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <p class="reasoning-text">{t.reasoning}</p>
        </details>
      ) : null}
      {t.role === 'assistant' && t.json ? (
        <pre class="text json">{t.state === 'streaming' ? t.text : pretty(t.text)}</pre>
      ) : (
        <div class="text">{t.role === 'assistant' ? <CitedText text={t.text} sources={t.sources ?? []} onOpen={open} /> : t.text}</div>
      )}
      {t.images ? <ImageList images={t.images} /> : null}
      {t.state === 'streaming' ? <span class="muted">Answering…</span> : null}
      {t.state === 'stopped' ? <span class="muted">Stopped</span> : null}
      {t.error ? <ErrorNote message={t.error} /> : null}
      {t.sources && t.sources.length > 0 ? (
        <ul class="sources" aria-label="Sources">
          {t.sources.map((s) => (
            <li key={s.index}>
              <button type="button" class="link" onClick={() => open(s)}>
                [{s.index}] {s.fileName}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}
