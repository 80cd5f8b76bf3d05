import { useState } from 'preact/hooks';
import { messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { ConfirmDialog, Empty, ErrorNote, Loading, Pager } from '../../components/ui';
import { usePage } from '../../components/use-page';
import { AddServerForm, TRANSPORTS } from './add-server';
import { ApprovalEditor, describeApproval } from './approval-setting';

type Page = ResultOf<'/api/mcp/servers', 'get'>;
type Server = Page['servers'][number];
type McpTool = ResultOf<'/api/mcp/servers/{id}/tools', 'get'>['tools'][number];

const LIMIT = 20;

/**
 * The project's MCP servers: add one (by URL, the transport detected, or by command), list each
 * server's tools (asked of the server), delete with a confirmation naming it. Loaded as a chunk
 * of its own when the tab is opened.
 */
export function McpScreen({ projectId }: { projectId: string }) {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  const [adding, setAdding] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Server | null>(null);
  const { page, error, setError, reload } = usePage((signal) => api.call('get', '/api/mcp/servers', { query: { projectId, limit: LIMIT, offset }, signal }), [projectId, offset]);

  const remove = async () => {
    if (!deleting) return;
    try {
      await api.call('delete', '/api/mcp/servers/{id}', { params: { id: deleting.id } });
      setAdded(null);
      reload();
    } catch (e) {
      setError(messageOf(e));
    }
    setDeleting(null);
  };

  return (
    <section aria-labelledby="mcp-title">
      <div class="title-row">
        <h2 id="mcp-title">MCP servers</h2>
        <button type="button" class="primary" onClick={() => setAdding(true)} disabled={adding}>
          Add server
        </button>
      </div>
      {adding ? (
        <AddServerForm
          projectId={projectId}
          onCancel={() => setAdding(false)}
          onAdded={(r) => {
            setAdding(false);
            setAdded(`Added ${r.server.name}: ${r.tools.length} tool${r.tools.length === 1 ? '' : 's'}`);
            reload();
          }}
        />
      ) : null}
      {added ? (
        <p class="ok" role="status">
          {added}
        </p>
      ) : null}
      <ErrorNote message={error} />
      {!page && !error ? <Loading what="MCP servers" /> : null}
      {page && page.servers.length === 0 && !adding ? (
        <Empty title="No MCP servers yet">An MCP server gives the agent its tools. Add one by its URL (the transport is detected) with Add server.</Empty>
      ) : null}
      {page && page.servers.length > 0 ? (
        <ul class="servers">
          {page.servers.map((s) => (
            <ServerItem key={s.id} server={s} onDelete={() => setDeleting(s)} />
          ))}
        </ul>
      ) : null}
      {page ? <Pager label="MCP servers" offset={offset} limit={LIMIT} total={page.total} onOffset={setOffset} /> : null}
      <ConfirmDialog open={deleting !== null} title="Delete MCP server?" confirm="Delete server" onConfirm={remove} onClose={() => setDeleting(null)}>
        <p>
          Delete the MCP server <strong>{deleting?.name}</strong>? The service disconnects from it and the agent no longer uses its tools. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** A server: where it is, and its tools, asked of the server when the list is opened. */
function ServerItem({ server, onDelete }: { server: Server; onDelete: () => void }) {
  const api = useApi();
  const [tools, setTools] = useState<McpTool[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [approvals, setApprovals] = useState(server.requiresApproval);
  const [editing, setEditing] = useState(false);
  const toggle = () => {
    const next = !open;
    setOpen(next);
    if (!next || tools) return;
    setError(null);
    api
      .call('get', '/api/mcp/servers/{id}/tools', { params: { id: server.id } })
      .then((r) => setTools(r.tools))
      .catch((e) => setError(messageOf(e)));
  };
  const where = server.transport === 'stdio' ? [server.command, ...server.args].join(' ') : server.url;
  const secrets = [...server.headerNames.map((h) => `header ${h}`), ...server.envNames.map((n) => `env ${n}`)];
  return (
    <li class="card server" aria-labelledby={`server-${server.id}`}>
      <div class="title-row">
        <div>
          <h3 id={`server-${server.id}`}>{server.name}</h3>
          <div class="muted">
            {TRANSPORTS[server.transport] ?? server.transport} · <code>{where}</code>
            {secrets.length ? ` · ${secrets.join(', ')} (stored encrypted)` : ''}
          </div>
          <div class="muted server-flags">
            {describeApproval(approvals)} · {server.allowSampling ? 'sampling allowed' : 'no sampling'}
          </div>
        </div>
        <div class="actions">
          <button type="button" aria-expanded={open} aria-controls={`server-tools-${server.id}`} onClick={toggle}>
            {open ? 'Hide tools' : 'Show tools'}
          </button>
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)} aria-label={`Approvals of ${server.name}`}>
            Approvals
          </button>
          <button type="button" class="danger" onClick={onDelete} aria-label={`Delete ${server.name}`}>
            Delete
          </button>
        </div>
      </div>
      {editing ? (
        <ApprovalEditor
          serverId={server.id}
          setting={approvals}
          onSaved={(setting) => {
            setApprovals(setting);
            setEditing(false);
          }}
        />
      ) : null}
      <div id={`server-tools-${server.id}`} hidden={!open}>
        <ErrorNote message={error} />
        {open && !tools && !error ? <p aria-live="polite">Asking the server for its tools…</p> : null}
        {tools && tools.length === 0 ? <p class="muted">This server offers no tools.</p> : null}
        {tools && tools.length > 0 ? (
          <ul class="server-tools" aria-label={`Tools of ${server.name}`}>
            {tools.map((t) => (
              <li key={t.name}>
                <details>
                  <summary>
                    <code>{t.name}</code>
                    {t.description ? <span class="muted"> — {t.description}</span> : null}
                  </summary>
                  <pre class="mono">{JSON.stringify(t.inputSchema, null, 2)}</pre>
                </details>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </li>
  );
}
