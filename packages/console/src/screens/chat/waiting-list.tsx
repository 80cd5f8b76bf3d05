import { ApprovalCard } from './approval-card';
import { QuestionForm } from './question-form';
import type { Decision, Waiting } from './waiting';

/** What waits for the person in the chat, below the transcript: tool calls to approve or deny, MCP servers' questions. */
export function WaitingList({ items, onDecide }: { items: readonly Waiting[]; onDecide: (item: Waiting, decision: Decision) => Promise<void> }) {
  if (items.length === 0) return null;
  return (
    <section class="waiting" aria-labelledby="waiting-title">
      <h3 id="waiting-title">Waiting for you</h3>
      <ul>
        {items.map((item) =>
          item.kind === 'tool' ? (
            <ApprovalCard key={item.id} item={item} onDecide={(decision, reason) => onDecide(item, decision === 'deny' && reason ? { decision, reason } : { decision })} />
          ) : (
            <QuestionForm key={item.id} item={item} onAnswer={(decision, content) => onDecide(item, decision === 'accept' ? { decision, content: content ?? {} } : { decision })} />
          ),
        )}
      </ul>
    </section>
  );
}
