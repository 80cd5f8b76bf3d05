import { useState } from 'preact/hooks';
import { ApiError, messageOf } from '../../api/client';
import { ErrorNote, Field } from '../../components/ui';
import { pretty, StepName } from './tool-steps';
import type { Waiting } from './waiting';

/**
 * A tool call waiting for the person: the tool, the arguments the model gave, Approve, and Deny
 * with an optional reason (given to the model with the denial). `onDecide` continues the turn;
 * the service's refusal (already decided, expired) is shown in its words and the buttons go.
 */
export function ApprovalCard({ item, onDecide }: { item: Waiting; onDecide: (decision: 'approve' | 'deny', reason: string) => Promise<void> }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [closed, setClosed] = useState(false);
  const [busy, setBusy] = useState(false);
  const id = `reason-${item.id}`;
  const run = async (decision: 'approve' | 'deny') => {
    setBusy(true);
    setError(null);
    try {
      await onDecide(decision, reason.trim());
    } catch (e) {
      setError(messageOf(e));
      if (e instanceof ApiError && (e.status === 409 || e.status === 404)) setClosed(true);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="waiting-item" aria-label={`Approval of ${item.tool}`}>
      <p>
        <strong>Approve this call?</strong> <StepName name={item.tool} />
      </p>
      <h4>Arguments</h4>
      <pre class="step-arguments">{pretty(item.arguments) || '{}'}</pre>
      <ErrorNote message={error} />
      {closed ? null : (
        <>
          <Field id={id} label="Reason (optional, given to the model when denied)">
            <input id={id} value={reason} onInput={(e) => setReason(e.currentTarget.value)} maxLength={1000} />
          </Field>
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => void run('approve')}>
              Approve
            </button>
            <button type="button" class="danger" disabled={busy} onClick={() => void run('deny')}>
              Deny
            </button>
          </div>
        </>
      )}
    </li>
  );
}
