import { useState } from 'preact/hooks';
import { messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { describedBy, ErrorNote, Field } from '../../components/ui';

type Outcome = ResultOf<'/api/tools/{id}/run', 'post'>;

/** What a failed run's kind means, in words. */
const KINDS: Record<string, string> = {
  thrown: 'The tool threw an error',
  timeout: 'The tool ran out of time',
  out_of_memory: 'The tool ran out of memory',
  invalid_result: 'The tool returned something that is not JSON',
  invalid_code: 'The code could not run',
};

/**
 * Runs the saved tool with arguments (a JSON object) and shows the outcome: the result, or the
 * tool's error (thrown, timed out, ...), with its logs in both cases. Arguments the schema
 * refuses are the service's 400, shown as it words it.
 */
export function RunPanel({ toolId }: { toolId: string }) {
  const api = useApi();
  const [args, setArgs] = useState('{}');
  const [argsError, setArgsError] = useState<string | undefined>();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async (e: Event) => {
    e.preventDefault();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(args || '{}') as Record<string, unknown>;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    } catch {
      return setArgsError('Not valid JSON: the arguments are one object, such as {"city": "Paris"}');
    }
    setArgsError(undefined);
    setError(null);
    setOutcome(null);
    setBusy(true);
    try {
      setOutcome(await api.call('post', '/api/tools/{id}/run', { params: { id: toolId }, body: { args: parsed } }));
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="run-title">
      <h2 id="run-title">Run</h2>
      <form onSubmit={run}>
        <Field id="run-args" label="Arguments (JSON)" error={argsError}>
          <textarea id="run-args" class="mono" rows={3} spellcheck={false} value={args} onInput={(e) => setArgs(e.currentTarget.value)} {...describedBy('run-args', argsError)} />
        </Field>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Running…' : 'Run'}
          </button>
        </div>
      </form>
      <ErrorNote message={error} />
      {outcome ? (
        <div class="run-outcome" data-outcome={outcome.success ? 'ok' : 'failed'} aria-live="polite">
          {outcome.success ? (
            <>
              <h3>Result</h3>
              <pre class="result">{JSON.stringify(outcome.result, null, 2) ?? 'null'}</pre>
            </>
          ) : (
            <>
              <h3>{KINDS[outcome.error?.kind ?? 'thrown'] ?? 'The tool failed'}</h3>
              <p class="error" role="alert">
                {outcome.message}
              </p>
            </>
          )}
          <h3>Logs</h3>
          {outcome.logs.length > 0 ? <pre class="logs">{outcome.logs.join('\n')}</pre> : <p class="muted">Nothing was logged.</p>}
          <p class="muted">{Math.round(outcome.durationMs)} ms</p>
        </div>
      ) : null}
    </section>
  );
}
