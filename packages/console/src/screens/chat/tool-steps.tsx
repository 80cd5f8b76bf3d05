import type { ToolStep } from './answer-stream';

/** JSON text indented for reading; anything else as it is. */
export function pretty(text: string | undefined): string {
  if (!text) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A tool step's name: an MCP server's tool is `mcp__<server>__<tool>` (server names have no `__`). */
export function StepName({ name }: { name: string }) {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  return mcp ? (
    <>
      MCP server {mcp[1]}: <code>{mcp[2]}</code>
    </>
  ) : (
    <>
      Tool <code>{name}</code>
    </>
  );
}

const STATES = { running: 'running…', waiting: 'waiting for approval', done: 'done', failed: 'failed', 'no-result': 'no result' } as const;

/** A step as shown: a call still without a result that waits for approval is waiting. */
const shown =
  (held: ReadonlySet<string>) =>
  (s: ToolStep): ToolStep =>
    held.has(s.id) && (s.state === 'running' || s.state === 'no-result') ? { ...s, state: 'waiting' } : s;

/**
 * The tools an answer used, each a collapsible step (<details>): the tool's name and how it
 * went, and when opened the arguments the model gave and the result or error it got back. A
 * call in `held` (the ids of calls waiting for approval, also after a reload) is waiting.
 */
export function ToolSteps({ steps, held }: { steps: readonly ToolStep[]; held: ReadonlySet<string> }) {
  if (steps.length === 0) return null;
  return (
    <ol class="steps" aria-label="Tool steps">
      {steps.map(shown(held)).map((s, i) => (
        <li key={i} class="step" data-state={s.state}>
          <details>
            <summary>
              <StepName name={s.name} />
              <span class="step-state">{STATES[s.state]}</span>
            </summary>
            <h4>Arguments</h4>
            <pre class="step-arguments">{pretty(s.arguments) || '{}'}</pre>
            {s.state === 'running' || s.state === 'waiting' || s.state === 'no-result' ? null : (
              <>
                <h4>{s.state === 'failed' ? 'Error' : 'Result'}</h4>
                <pre class={s.state === 'failed' ? 'step-error' : 'step-result'}>{pretty(s.content)}</pre>
              </>
            )}
          </details>
        </li>
      ))}
    </ol>
  );
}
