import { useEffect, useState } from 'preact/hooks';
import { messageOf, type ResultOf } from '../api/client';
import { useApi } from '../app';
import { ErrorNote } from '../components/ui';
import { PROJECT_TABS, type ProjectTab, projectHref } from '../router';
import { ChatScreen } from './chat/chat';
import { KnowledgeScreen } from './knowledge/knowledge';

type FullProject = ResultOf<'/api/v1/projects/{id}', 'get'>['project'];

/** One project: its name and a tab per area (knowledge, chat; tools and MCP slot in later). */
export function ProjectScreen({ projectId, tab }: { projectId: string; tab: ProjectTab }) {
  const api = useApi();
  const [project, setProject] = useState<FullProject | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setProject(null);
    setError(null);
    api
      .call('get', '/api/v1/projects/{id}', { params: { id: projectId } })
      .then((r) => setProject(r.project))
      .catch((e) => setError(messageOf(e)));
  }, [projectId]);

  if (error) {
    return (
      <section>
        <p>
          <a href="#/projects">← Projects</a>
        </p>
        <ErrorNote message={error} />
      </section>
    );
  }
  if (!project) return <p aria-live="polite">Loading project…</p>;
  return (
    <section aria-labelledby="project-title">
      <p>
        <a href="#/projects">← Projects</a>
      </p>
      <h1 id="project-title">
        {project.icon ? <span aria-hidden="true">{project.icon} </span> : null}
        {project.name}
      </h1>
      <p class="muted">
        {project.provider}: {project.model}
        {project.resolved?.baseUrl ? ` · calls go to ${project.resolved.baseUrl}` : ''}
      </p>
      <nav class="tabs" aria-label="Project sections">
        {PROJECT_TABS.map((t) => (
          <a key={t.id} href={projectHref(project.id, t.id)} aria-current={t.id === tab ? 'page' : undefined}>
            {t.label}
          </a>
        ))}
      </nav>
      {tab === 'chat' ? <ChatScreen projectId={project.id} /> : <KnowledgeScreen projectId={project.id} />}
    </section>
  );
}
