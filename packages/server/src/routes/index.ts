import { z } from 'zod';
import type { ApiRoute } from '../route.js';
import { agentMcpRoutes } from './agent-mcp.js';
import { approvalsRoutes } from './approvals.js';
import { auditRoutes } from './audit.js';
import { authRoutes } from './auth.js';
import { chatsRoutes } from './chats.js';
import { completionsRoutes } from './completions.js';
import { credentialsRoutes } from './credentials.js';
import { knowledgeRoutes } from './knowledge.js';
import { localModelsRoutes } from './local-models.js';
import { mcpRoutes } from './mcp.js';
import { projectsRoutes } from './projects.js';
import { responsesRoutes } from './responses.js';
import { toolsRoutes } from './tools.js';

/**
 * Every authenticated route of the API, one file per area. Public routes live in `app.ts`.
 * The order is the order routes are registered, matched and documented (`/openapi.json`): an
 * area's routes stay together, and a new area goes where its paths should be matched.
 */
export const apiRoutes: readonly ApiRoute[] = [
  ...authRoutes,
  ...projectsRoutes,
  ...completionsRoutes,
  ...approvalsRoutes,
  ...responsesRoutes,
  ...chatsRoutes,
  ...toolsRoutes,
  ...mcpRoutes,
  ...agentMcpRoutes,
  ...localModelsRoutes,
  ...credentialsRoutes,
  ...knowledgeRoutes,
  ...auditRoutes,
];

export const HealthResponse = z.object({ status: z.literal('ok') });
