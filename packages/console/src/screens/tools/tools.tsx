import { useEffect, useState } from 'preact/hooks';
import { messageOf, type ResultOf } from '../../api/client';
import { useApi } from '../../api/context';
import { ListTable, RowAction } from '../../components/list-table';
import { ConfirmDialog, Empty, ErrorNote, Loading, Pager } from '../../components/ui';
import { usePage } from '../../components/use-page';
import { RunPanel } from './run-panel';
import { type Tool, ToolForm } from './tool-form';

type Page = ResultOf<'/api/tools', 'get'>;
type ListedTool = Page['tools'][number];

const LIMIT = 20;
const LANGUAGES = { javascript: 'JavaScript', python: 'Python' } as const;

/**
 * The project's tools: the list (enable switch, open, delete), or one tool open in the editor
 * with its run box. Loaded as a chunk of its own when the tab is opened.
 */
export function ToolsScreen({ projectId }: { projectId: string }) {
  // `version` counts saves: each one reloads the tool (and its form) from the service.
  const [open, setOpen] = useState<{ id: string | null; saved?: string; version: number } | null>(null);
  if (open) {
    return (
      <ToolView
        projectId={projectId}
        toolId={open.id}
        saved={open.saved}
        version={open.version}
        onOpen={(id, saved) => setOpen({ id, saved, version: open.version + 1 })}
        onClose={() => setOpen(null)}
      />
    );
  }
  return <ToolList projectId={projectId} onOpen={(id) => setOpen({ id, version: 0 })} />;
}

/** Switches a tool on or off at once (the activate route); the agent offers only enabled tools. */
function EnabledSwitch({ tool, onChanged }: { tool: { id: string; name: string; enabled: boolean }; onChanged: (enabled: boolean) => void }) {
  const api = useApi();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const toggle = async (enabled: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await api.call('post', '/api/tools/{id}/activate', { params: { id: tool.id }, body: { toolId: tool.id, activeState: enabled } });
      onChanged(enabled);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="switch">
      <label>
        <input type="checkbox" role="switch" checked={tool.enabled} aria-checked={tool.enabled} disabled={busy} aria-label={`${tool.name} enabled`} onChange={(e) => toggle(e.currentTarget.checked)} />
        <span aria-hidden="true">{tool.enabled ? 'Enabled' : 'Disabled'}</span>
      </label>
      <ErrorNote message={error} />
    </span>
  );
}

function ToolList({ projectId, onOpen }: { projectId: string; onOpen: (id: string | null) => void }) {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  const [deleting, setDeleting] = useState<ListedTool | null>(null);
  const { page, error, setError, setPage, reload } = usePage((signal) => api.call('get', '/api/tools', { query: { projectId, limit: LIMIT, offset }, signal }), [projectId, offset]);

  const remove = async () => {
    if (!deleting) return;
    try {
      await api.call('delete', '/api/tools/{id}', { params: { id: deleting.id } });
      reload();
    } catch (e) {
      setError(messageOf(e));
    }
    setDeleting(null);
  };
  const changed = (id: string, enabled: boolean) => setPage((p) => p && { ...p, tools: p.tools.map((t) => (t.id === id ? { ...t, enabled } : t)) });

  return (
    <section aria-labelledby="tools-title">
      <div class="title-row">
        <h2 id="tools-title">Tools</h2>
        <button type="button" class="primary" onClick={() => onOpen(null)}>
          New tool
        </button>
      </div>
      <ErrorNote message={error} />
      {!page && !error ? <Loading what="tools" /> : null}
      {page && page.tools.length === 0 ? (
        <Empty title="No tools yet">A tool is code the agent can call (JavaScript or Python, run in a sandbox). Create one with New tool, then try it with Run.</Empty>
      ) : null}
      {page && page.tools.length > 0 ? (
        <ListTable caption="Tools of the project, newest first" columns={['Name', 'Language', 'Offered to the agent']}>
          {page.tools.map((t) => (
            <tr key={t.id}>
              <td>
                <button type="button" class="link" onClick={() => onOpen(t.id)}>
                  {t.name}
                </button>
                {t.description ? <div class="muted">{t.description}</div> : null}
              </td>
              <td>{LANGUAGES[t.language]}</td>
              <td>
                <EnabledSwitch tool={t} onChanged={(enabled) => changed(t.id, enabled)} />
              </td>
              <td class="actions">
                <RowAction action="Edit and run" target={t.name} onClick={() => onOpen(t.id)} />
                <RowAction action="Delete" target={t.name} danger onClick={() => setDeleting(t)} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      {page ? <Pager label="Tools" offset={offset} limit={LIMIT} total={page.total} onOffset={setOffset} /> : null}
      <DeleteToolDialog tool={deleting} onConfirm={remove} onClose={() => setDeleting(null)} />
    </section>
  );
}

function DeleteToolDialog({ tool, onConfirm, onClose }: { tool: { name: string } | null; onConfirm: () => void; onClose: () => void }) {
  return (
    <ConfirmDialog open={tool !== null} title="Delete tool?" confirm="Delete tool" onConfirm={onConfirm} onClose={onClose}>
      <p>
        Delete the tool <strong>{tool?.name}</strong>? The agent stops offering it; its code is gone. This cannot be undone.
      </p>
    </ConfirmDialog>
  );
}

/** One tool: the form (new or saved), and for a saved tool its switch, run box and delete. */
function ToolView(props: { projectId: string; toolId: string | null; saved: string | undefined; version: number; onOpen: (id: string, saved: string) => void; onClose: () => void }) {
  const api = useApi();
  const [tool, setTool] = useState<Tool | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);

  useEffect(() => {
    if (!props.toolId) return setTool(null);
    api
      .call('get', '/api/tools/{id}', { params: { id: props.toolId } })
      .then((r) => setTool(r.tool))
      .catch((e) => setError(messageOf(e)));
  }, [props.toolId, props.version]);

  const remove = async () => {
    if (!tool) return;
    try {
      await api.call('delete', '/api/tools/{id}', { params: { id: tool.id } });
      props.onClose();
    } catch (e) {
      setDeleting(false);
      setError(messageOf(e));
    }
  };

  const back = (
    <p>
      <button type="button" class="link" onClick={props.onClose}>
        ← All tools
      </button>
    </p>
  );
  if (error) {
    return (
      <section>
        {back}
        <ErrorNote message={error} />
      </section>
    );
  }
  if (props.toolId && !tool) return <p aria-live="polite">Loading the tool…</p>;
  return (
    <section class="tool-view" aria-label={tool ? `Tool ${tool.name}` : 'New tool'}>
      {back}
      {props.saved ? (
        <p class="ok" role="status">
          {props.saved}
        </p>
      ) : null}
      {tool ? (
        <div class="title-row">
          <EnabledSwitch tool={tool} onChanged={(enabled) => setTool({ ...tool, enabled })} />
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Delete tool
          </button>
        </div>
      ) : null}
      {/* A new key per tool: the form's values start from the loaded tool. */}
      <ToolForm key={`${tool?.id ?? 'new'}:${tool?.updatedAt ?? ''}`} projectId={props.projectId} tool={tool} onSaved={props.onOpen} />
      {tool ? <RunPanel toolId={tool.id} /> : null}
      <DeleteToolDialog tool={deleting ? tool : null} onConfirm={remove} onClose={() => setDeleting(false)} />
    </section>
  );
}
