import { useEffect, useState } from 'preact/hooks';
import { messageOf, type ResultOf } from '../api/client';
import { useApi } from '../api/context';
import { lazyScreen } from '../components/lazy';
import { ErrorNote } from '../components/ui';
import { PROJECT_TABS, type ProjectTab, projectHref } from '../router';
import { ChatScreen } from './chat/chat';
import { KnowledgeScreen } from './knowledge/knowledge';

// Tools (with its code editor) and MCP servers are chunks of their own, loaded when opened.
const ToolsScreen = lazyScreen(() => import('./tools/tools').then((m) => m.ToolsScreen));
const McpScreen = lazyScreen(() => import('./mcp/mcp').then((m) => m.McpScreen));

/** The screen of a project's tab. */
function TabScreen({ projectId, tab, chatId }: { projectId: string; tab: ProjectTab; chatId: string | undefined }) {
  switch (tab) {
    case 'chat':
      return <ChatScreen projectId={projectId} routeChatId={chatId} />;
    case 'tools':
      return <ToolsScreen projectId={projectId} />;
    case 'mcp':
      return <McpScreen projectId={projectId} />;
    default:
      return <KnowledgeScreen projectId={projectId} />;
  }
}

type FullProject = ResultOf<'/api/v1/projects/{id}', 'get'>['project'];

/** One project: its name and a tab per area (knowledge, chat, tools, MCP servers). */
export function ProjectScreen({ projectId, tab, chatId }: { projectId: string; tab: ProjectTab; chatId?: string | undefined }) {
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
      <TabScreen projectId={project.id} tab={tab} chatId={chatId} />
    </section>
  );
}
