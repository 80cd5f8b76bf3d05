import { useEffect, useState } from 'preact/hooks';

/**
 * Routes are hash fragments (`#/projects/proj_1/chat`): the server serves one page for all of
 * them, and a route never carries the key or anything secret.
 */
export type Route =
  | { readonly name: 'projects' }
  /** `chatId`: the chat open in the chat tab (`#/projects/proj_1/chat/chat_1`), so a reload or a link opens it again. */
  | { readonly name: 'project'; readonly projectId: string; readonly tab: ProjectTab; readonly chatId?: string }
  | { readonly name: AccountSection };

/**
 * The sections of a project, in the order of its tab bar. A new area (tools, MCP servers) is one
 * more entry here and one more case in screens/project.tsx.
 */
export const PROJECT_TABS = [
  { id: 'knowledge', label: 'Knowledge' },
  { id: 'chat', label: 'Chat' },
  { id: 'tools', label: 'Tools' },
  { id: 'mcp', label: 'MCP servers' },
] as const;
export type ProjectTab = (typeof PROJECT_TABS)[number]['id'];

/**
 * The top-level sections of the navigation, in its order. A section other than projects is
 * routed by its id (`#/keys`) and rendered by its case in app.tsx.
 */
export const SECTIONS = [
  { id: 'projects', label: 'Projects', href: '#/projects' },
  { id: 'credentials', label: 'Credentials', href: '#/credentials' },
  { id: 'keys', label: 'API keys', href: '#/keys' },
  { id: 'local-models', label: 'Local models', href: '#/local-models' },
] as const;

/** The sections that are not about one project: their route is their id (`#/keys`). */
export type AccountSection = Exclude<(typeof SECTIONS)[number]['id'], 'projects'>;
const ACCOUNT_SECTIONS: readonly string[] = SECTIONS.map((s) => s.id).filter((id) => id !== 'projects');

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'projects' && parts[1]) {
    const tab = PROJECT_TABS.find((t) => t.id === parts[2])?.id ?? 'knowledge';
    return { name: 'project', projectId: parts[1], tab, ...(tab === 'chat' && parts[3] ? { chatId: parts[3] } : {}) };
  }
  if (parts[0] && ACCOUNT_SECTIONS.includes(parts[0])) return { name: parts[0] as AccountSection };
  return { name: 'projects' };
}

export const projectHref = (projectId: string, tab: ProjectTab = 'knowledge') => `#/projects/${encodeURIComponent(projectId)}/${tab}`;

/** The chat tab with a chat open (none: a new chat). */
export const chatHref = (projectId: string, chatId: string | null) => `${projectHref(projectId, 'chat')}${chatId ? `/${encodeURIComponent(chatId)}` : ''}`;

/** The current route, updated on every hash change. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
