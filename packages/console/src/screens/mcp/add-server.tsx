import { useState } from 'preact/hooks';
import { ApiError, type BodyOf, messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { fieldErrors } from '../../components/field-errors';
import { CheckField, describedBy, ErrorNote, Field } from '../../components/ui';
import { ApprovalChoice, type ApprovalValue, approvalProblem, approvalSetting } from './approval-setting';

type Added = ResultOf<'/api/mcp/add-server', 'post'>;
type Transport = 'http' | 'sse';
type Detected = ResultOf<'/api/mcp/detect-transport', 'post'>;

const FIELDS = ['name', 'url', 'transport', 'headers', 'command', 'args', 'env', 'requiresApproval', 'allowSampling'] as const;
/** The service's messages about a URL that name it only inside the sentence. */
const ALIASES = { 'refused to connect': 'url', 'could not be reached': 'url', 'mcp server at': 'url', 'mcp server (http': 'url' };
export const TRANSPORTS: Record<string, string> = { http: 'Streamable HTTP', sse: 'HTTP+SSE (legacy)', stdio: 'stdio (a program on the server)' };

/** `Name: value` lines (headers) or `NAME=value` lines (environment) as an object. */
export function parsePairs(text: string, separator: ':' | '='): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const at = line.indexOf(separator);
    if (at <= 0) throw new Error(`"${line.trim()}" is not ${separator === ':' ? 'Name: value' : 'NAME=value'}`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/**
 * Adds an MCP server: by URL (streamable HTTP or the legacy SSE transport, detected by the
 * service when asked, or chosen) or by command (stdio, only where the operator allows it). The
 * service connects before it saves; its refusal (an address the outbound policy refuses, a
 * server it cannot reach, a program not allowed) is shown as it words it.
 */
export function AddServerForm({ projectId, onAdded, onCancel }: { projectId: string; onAdded: (added: Added) => void; onCancel: () => void }) {
  const api = useApi();
  const [kind, setKind] = useState<'url' | 'command'>('url');
  const [v, setV] = useState({ name: '', url: '', transport: 'detect' as Transport | 'detect', headers: '', command: '', args: '', env: '' });
  const [approval, setApproval] = useState<ApprovalValue>({ mode: 'none', names: '' });
  const [allowSampling, setAllowSampling] = useState(false);
  const [detected, setDetected] = useState<Detected | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const set = (name: keyof typeof v) => (e: Event) => setV({ ...v, [name]: (e.currentTarget as HTMLInputElement).value });

  /** Asks the service which transports the URL speaks; the recommended one is chosen. */
  const detect = async (): Promise<Transport | null> => {
    setErrors({});
    setDetected(null);
    setBusy('Detecting the transport…');
    try {
      const found = await api.call('post', '/api/mcp/detect-transport', { body: { url: v.url.trim() } });
      setDetected(found);
      if (found.recommended && found.recommended !== 'stdio') {
        setV((old) => ({ ...old, transport: found.recommended as Transport }));
        return found.recommended;
      }
      return null;
    } catch (err) {
      setErrors({ url: messageOf(err) });
      return null;
    } finally {
      setBusy(null);
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    // Checked before detecting or connecting: nothing else of the form depends on it.
    const noNames = approvalProblem(approval);
    if (noNames) return setErrors({ requiresApproval: noNames });
    let body: BodyOf<'/api/mcp/add-server', 'post'>;
    try {
      if (kind === 'url') {
        const transport = v.transport === 'detect' ? await detect() : v.transport;
        if (!transport) return;
        const headers = parsePairs(v.headers, ':');
        body = { projectId, name: v.name.trim(), transport, url: v.url.trim(), ...(Object.keys(headers).length ? { headers } : {}) };
      } else {
        const env = parsePairs(v.env, '=');
        const args = v.args.split('\n').filter((a) => a.trim() !== '');
        body = { projectId, name: v.name.trim(), transport: 'stdio', command: v.command.trim(), ...(args.length ? { args } : {}), ...(Object.keys(env).length ? { env } : {}) };
      }
    } catch (err) {
      return setErrors({ [kind === 'url' ? 'headers' : 'env']: messageOf(err) });
    }
    setErrors({});
    setBusy('Connecting to the server…');
    try {
      onAdded(await api.call('post', '/api/mcp/add-server', { body: { ...body, requiresApproval: approvalSetting(approval), allowSampling } }));
    } catch (err) {
      setErrors(err instanceof ApiError && err.status === 400 ? fieldErrors(err, FIELDS, ALIASES) : { [kind === 'url' ? 'url' : 'form']: messageOf(err) });
    } finally {
      setBusy(null);
    }
  };

  const input = (name: 'name' | 'url' | 'command', label: string, hint: string, extra: Record<string, unknown> = {}) => (
    <Field id={`mcp-${name}`} label={label} error={errors[name]} hint={hint}>
      <input id={`mcp-${name}`} value={v[name]} onInput={set(name)} {...describedBy(`mcp-${name}`, errors[name], true)} {...extra} />
    </Field>
  );
  const lines = (name: 'headers' | 'args' | 'env', label: string, hint: string) => (
    <Field id={`mcp-${name}`} label={label} error={errors[name]} hint={hint}>
      <textarea id={`mcp-${name}`} class="mono" rows={2} spellcheck={false} value={v[name]} onInput={set(name)} {...describedBy(`mcp-${name}`, errors[name], true)} />
    </Field>
  );

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="mcp-form-title">
      <h2 id="mcp-form-title">Add an MCP server</h2>
      {input('name', 'Name', 'Letters, digits, - and single _; the agent sees its tools as mcp__name__tool', { required: true, maxLength: 32 })}
      <fieldset class="choice">
        <legend>Connect to</legend>
        <label>
          <input type="radio" name="mcp-kind" checked={kind === 'url'} onChange={() => setKind('url')} /> a URL (streamable HTTP or SSE)
        </label>
        <label>
          <input type="radio" name="mcp-kind" checked={kind === 'command'} onChange={() => setKind('command')} /> a command on the server (stdio)
        </label>
      </fieldset>
      {kind === 'url' ? (
        <>
          <div class="url-row">
            {input('url', 'URL', 'e.g. http://127.0.0.1:3001/mcp or …/sse', { type: 'url', required: true, placeholder: 'https://' })}
            <Field id="mcp-transport" label="Transport" error={errors.transport}>
              <select id="mcp-transport" value={v.transport} onChange={set('transport')} {...describedBy('mcp-transport', errors.transport)}>
                <option value="detect">Detect from the URL</option>
                <option value="http">{TRANSPORTS.http}</option>
                <option value="sse">{TRANSPORTS.sse}</option>
              </select>
            </Field>
          </div>
          <div class="actions start">
            <button type="button" onClick={() => void detect()} disabled={!v.url.trim() || busy !== null}>
              Detect transport
            </button>
          </div>
          {detected ? (
            <p class="ok detected" role="status">
              Detected: {detected.supportedTypes.map((t) => `${TRANSPORTS[t] ?? t} (${t})`).join(', ')}
              {detected.recommended ? `; using ${detected.recommended}` : ''}
            </p>
          ) : null}
          {lines('headers', 'Headers', 'One Name: value per line (e.g. Authorization: Bearer …); values are stored encrypted and never shown again')}
        </>
      ) : (
        <>
          {input('command', 'Command', 'The program to start; the server must allow it (--allow-mcp-command or --allow-stdio-mcp)', { required: true })}
          {lines('args', 'Arguments', 'One argument per line')}
          {lines('env', 'Environment', 'One NAME=value per line; values are stored encrypted and never shown again')}
        </>
      )}
      <ApprovalChoice id="mcp-approval" value={approval} error={errors.requiresApproval} onChange={setApproval} />
      <CheckField
        id="mcp-allowSampling"
        label="Allow sampling"
        hint="Lets the server ask the project's model for completions during its tool calls. Set only here: a saved server's sampling cannot be changed (delete and add it again)."
        checked={allowSampling}
        error={errors.allowSampling}
        onChange={setAllowSampling}
      />
      {approval.mode !== 'named' && errors.requiresApproval ? <ErrorNote message={errors.requiresApproval} /> : null}
      <ErrorNote message={errors.form} />
      {busy ? (
        <p class="muted" role="status">
          {busy}
        </p>
      ) : null}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy !== null}>
          Add server
        </button>
      </div>
    </form>
  );
}
