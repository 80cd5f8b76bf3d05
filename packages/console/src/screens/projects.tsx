import { useState } from 'preact/hooks';
import { messageOf } from '../api/client';
import { useApi } from '../api/context';
import { formatTime } from '../components/format';
import { ListTable, RowAction } from '../components/list-table';
import { ConfirmDialog, Empty, ErrorNote, Loading, Pager, useDebounced } from '../components/ui';
import { usePage } from '../components/use-page';
import { projectHref } from '../router';
import { type Project, ProjectForm } from './project-form';

const LIMIT = 20;

/** The caller's projects: search by name, pages of 20, create, edit, delete with confirmation. */
export function ProjectsScreen() {
  const api = useApi();
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState({ searchWord: '', offset: 0 });
  const [editing, setEditing] = useState<Project | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Project | null>(null);

  useDebounced(search, 250, (searchWord) => setQuery({ searchWord: searchWord.trim(), offset: 0 }));
  const { page, error, setError, reload } = usePage((signal) => api.call('get', '/api/v1/projects', { query: { limit: LIMIT, offset: query.offset, searchWord: query.searchWord }, signal }), [query]);

  const remove = async () => {
    if (!deleting) return;
    try {
      await api.call('delete', '/api/v1/projects/{id}', { params: { id: deleting.id } });
      setDeleting(null);
      reload();
    } catch (e) {
      setDeleting(null);
      setError(messageOf(e));
    }
  };

  return (
    <section aria-labelledby="projects-title">
      <div class="title-row">
        <h1 id="projects-title">Projects</h1>
        <button type="button" class="primary" onClick={() => setEditing('new')}>
          New project
        </button>
      </div>
      {editing ? (
        <ProjectForm
          project={editing === 'new' ? null : editing}
          onDone={(saved) => {
            setEditing(null);
            if (saved) reload();
          }}
        />
      ) : null}
      <div class="toolbar">
        <label for="project-search">Search by name</label>
        <input id="project-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
      </div>
      <ErrorNote message={error} />
      {!page && !error ? <Loading what="projects" /> : null}
      {page && page.projects.length === 0 ? (
        query.searchWord ? (
          <Empty title={`No project's name contains "${query.searchWord}"`}>Try another part of the name, or clear the search.</Empty>
        ) : (
          <Empty title="No projects yet">A project is an agent: its model, its knowledge and its chats. Create one with New project.</Empty>
        )
      ) : null}
      {page && page.projects.length > 0 ? (
        <ListTable caption="Projects, newest first" columns={['Name', 'Model', 'Created']}>
          {page.projects.map((p) => (
            <tr key={p.id}>
              <td>
                <span
                  class="swatch"
                  ref={(el) => {
                    // Through the CSSOM, not a style attribute: the CSP allows no inline styles.
                    if (el) el.style.background = p.color || 'transparent';
                  }}
                  aria-hidden="true"
                >
                  {p.icon}
                </span>
                <a href={projectHref(p.id)}>{p.name}</a>
                {p.description ? <div class="muted">{p.description}</div> : null}
              </td>
              <td>
                {p.provider}: {p.model}
              </td>
              <td>{formatTime(p.createdAt)}</td>
              <td class="actions">
                <RowAction action="Edit" target={p.name} onClick={() => setEditing(p)} />
                <RowAction action="Delete" target={p.name} danger onClick={() => setDeleting(p)} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      {page ? <Pager label="Projects" offset={query.offset} limit={LIMIT} total={page.total} onOffset={(offset) => setQuery({ ...query, offset })} /> : null}
      <ConfirmDialog open={deleting !== null} title="Delete project?" confirm="Delete project" onConfirm={remove} onClose={() => setDeleting(null)}>
        <p>
          Delete <strong>{deleting?.name}</strong> with its documents, vectors, tools, MCP servers and chats? This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}
