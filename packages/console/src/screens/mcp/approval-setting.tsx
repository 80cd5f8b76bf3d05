import { useState } from 'preact/hooks';
import { messageOf } from '../../api/client';
import { useApi } from '../../api/context';
import { describedBy, ErrorNote, Field } from '../../components/ui';

/** Which of a server's tools wait for a person's approval, as the API takes it: none, all, or those named. */
export type RequiresApproval = boolean | string[];

/** The setting as the form holds it: a choice, and the names (separated by spaces, commas or lines) when some are named. */
export interface ApprovalValue {
  readonly mode: 'none' | 'all' | 'named';
  readonly names: string;
}

export const approvalValue = (setting: RequiresApproval): ApprovalValue => (Array.isArray(setting) ? { mode: 'named', names: setting.join(' ') } : { mode: setting ? 'all' : 'none', names: '' });

export const approvalSetting = (value: ApprovalValue): RequiresApproval => (value.mode === 'named' ? value.names.split(/[\s,]+/).filter(Boolean) : value.mode === 'all');

/**
 * What is wrong with the choice before it is sent: "named tools" with no name would mean none
 * (the service refuses an empty list too).
 */
export const approvalProblem = (value: ApprovalValue): string | undefined =>
  value.mode === 'named' && (approvalSetting(value) as string[]).length === 0 ? 'Name at least one tool, or choose none' : undefined;

/** How a setting reads in the server's list. */
export const describeApproval = (setting: RequiresApproval): string =>
  Array.isArray(setting) ? `approval for ${setting.join(', ') || 'no tools'}` : setting ? 'approval for all tools' : 'no approvals';

/** The choice of none / all tools / named tools, the names a text field shown when named. */
export function ApprovalChoice({ id, value, error, onChange }: { id: string; value: ApprovalValue; error?: string | undefined; onChange: (value: ApprovalValue) => void }) {
  const option = (mode: ApprovalValue['mode'], label: string) => (
    <label>
      <input type="radio" name={`${id}-mode`} checked={value.mode === mode} onChange={() => onChange({ ...value, mode })} /> {label}
    </label>
  );
  return (
    <>
      <fieldset class="choice">
        <legend>Calls that wait for a person's approval</legend>
        {option('none', 'none')}
        {option('all', 'all tools')}
        {option('named', 'named tools')}
      </fieldset>
      {value.mode === 'named' ? (
        <Field id={`${id}-names`} label="Tools that need approval" error={error} hint="The server's own tool names (e.g. delete_file), separated by spaces or commas">
          <input id={`${id}-names`} value={value.names} onInput={(e) => onChange({ ...value, names: e.currentTarget.value })} {...describedBy(`${id}-names`, error, true)} />
        </Field>
      ) : null}
    </>
  );
}

/** Changes a saved server's approval setting (`PATCH /api/mcp/servers/{id}`). */
export function ApprovalEditor({ serverId, setting, onSaved }: { serverId: string; setting: RequiresApproval; onSaved: (setting: RequiresApproval) => void }) {
  const api = useApi();
  const [value, setValue] = useState(() => approvalValue(setting));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    const noNames = approvalProblem(value);
    if (noNames) return setError(noNames);
    setBusy(true);
    setError(null);
    try {
      const r = await api.call('patch', '/api/mcp/servers/{id}', { params: { id: serverId }, body: { requiresApproval: approvalSetting(value) } });
      onSaved(r.server.requiresApproval);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="form approval-editor" onSubmit={save} aria-label="Approval setting">
      <ApprovalChoice id={`approval-${serverId}`} value={value} error={error ?? undefined} onChange={setValue} />
      {value.mode === 'named' ? null : <ErrorNote message={error} />}
      <div class="actions start">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save approvals'}
        </button>
      </div>
    </form>
  );
}
