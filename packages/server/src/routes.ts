import {
  type AgentPlatform,
  type Caller,
  CreateKeyRequest,
  CreateKeyResponse,
  ChatCompletionRequest,
  ChatCompletionResponse,
  ChatMessagesResponse,
  ChatResponse,
  CreateStreamRequest,
  StreamResponse,
  CreateChatRequest,
  CreateCredentialRequest,
  CreateDocumentRequest,
  ListChatsQuery,
  ListChatsResponse,
  CreateDocumentResponse,
  CredentialResponse,
  ListCredentialsResponse,
  UpdateCredentialRequest,
  CreateProjectRequest,
  ActivateToolRequest,
  CreateToolRequest,
  ListToolsQuery,
  ListToolsResponse,
  RunToolRequest,
  RunToolResponse,
  ToolResponse,
  UpdateToolRequest,
  DeleteLocalModelRequest,
  DeleteLocalModelResponse,
  DocumentResponse,
  ListLocalModelsQuery,
  ListLocalModelsResponse,
  ListDocumentsQuery,
  ListDocumentsResponse,
  GetSettingsQuery,
  KnowledgeSettingsResponse,
  PutSettingsRequest,
  SearchRequest,
  SearchResponse,
  UploadForm,
  type UploadRequest,
  UploadResponse,
  IdParam,
  ListKeysResponse,
  ListProjectsQuery,
  ListProjectsResponse,
  MessageResponse,
  ProjectResponse,
  UpdateProjectRequest,
  AddMcpServerRequest,
  AddMcpServerResponse,
  DeleteMcpServerResponse,
  DetectTransportRequest,
  DetectTransportResponse,
  ListMcpServersQuery,
  ListMcpServersResponse,
  McpServerResponse,
  McpToolsResponse,
} from '@agent-platform/core';
import { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One Server-Sent Event of document indexing (the `data` of each event). */
const IndexingEventSchema = z.object({
  type: z.enum(['progress', 'complete', 'error']),
  progress: z.number().min(0).max(100).optional(),
  message: z.string(),
  documentId: z.string().optional(),
});

/** What a handler gets: the authenticated caller and the request parts, not yet validated. */
export interface RouteInput {
  readonly caller: Caller;
  readonly params: Record<string, string>;
  readonly query: Record<string, string | string[]>;
  readonly body: unknown;
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
  readonly headers?: Headers;
}

/**
 * One API route. The schemas document the route (OpenAPI); validation itself happens in the
 * `AgentPlatform` method the handler calls, with the same schemas.
 */
export interface ApiRoute {
  readonly method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/v1/projects/{id}`. */
  readonly path: string;
  readonly summary: string;
  readonly tag: string;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly response: z.ZodType;
  /** Success status, 200 unless said. */
  readonly status?: number;
  /** `multipart`: the body is a form (files); the handler gets its fields and files. Default `json`. */
  readonly bodyKind?: 'json' | 'multipart';
  /** `upload`: the body may be as large as the upload limit (documents, files) instead of the JSON limit. */
  readonly bodyLimit?: 'json' | 'upload';
  /** The handler answers an `AsyncIterable` of events, sent as Server-Sent Events. */
  readonly sse?: boolean;
  /**
   * An OpenAI-compatible route: the handler answers `{ stream, body | chunks }` (JSON, or
   * OpenAI's SSE ending `data: [DONE]`), and errors also carry OpenAI's `error` object.
   */
  readonly openai?: boolean;
  /** The handler answers an `AsyncIterable` of `{ id, data }`: SSE with ids (resumable), ending `data: [DONE]`. */
  readonly replay?: boolean;
  /**
   * The local model routes: the handler answers `{ status, body }`, sent as is; errors thrown
   * before it (auth, malformed JSON) use `error` instead of `message`, plus `extra`.
   */
  readonly errorShape?: { readonly field: 'error'; readonly extra?: Record<string, unknown> };
  readonly handler: (platform: AgentPlatform, input: RouteInput) => Promise<unknown>;
}

const param = (input: RouteInput, name: string): string => input.params[name] ?? '';

const ChatIdParam = z.object({ chatId: z.string().min(1).max(200) });

/** Every authenticated route of the API. Public routes live in `app.ts`. */
export const apiRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/api/auth/create-key',
    summary: 'Create another API key for the caller (shown once)',
    tag: 'Access keys',
    body: CreateKeyRequest,
    response: CreateKeyResponse,
    status: 201,
    handler: (p, i) => p.createKey(i.caller, i.body as CreateKeyRequest),
  },
  {
    method: 'GET',
    path: '/api/auth/keys',
    summary: "List the caller's API keys (no secrets)",
    tag: 'Access keys',
    response: ListKeysResponse,
    handler: (p, i) => p.listKeys(i.caller),
  },
  {
    method: 'DELETE',
    path: '/api/auth/keys/{id}',
    summary: 'Revoke an API key',
    tag: 'Access keys',
    params: IdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteKey(i.caller, param(i, 'id')),
  },
  {
    method: 'POST',
    path: '/api/projects/create',
    summary: 'Create a project (an agent)',
    tag: 'Projects',
    body: CreateProjectRequest,
    response: ProjectResponse,
    status: 201,
    handler: (p, i) => p.createProject(i.caller, i.body as CreateProjectRequest),
  },
  {
    method: 'GET',
    path: '/api/v1/projects',
    summary: "List the caller's projects, newest first (offset or cursor pagination)",
    tag: 'Projects',
    query: ListProjectsQuery,
    response: ListProjectsResponse,
    handler: (p, i) => p.listProjects(i.caller, i.query as ListProjectsQuery),
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{id}',
    summary: 'Get a project',
    tag: 'Projects',
    params: IdParam,
    response: ProjectResponse,
    handler: (p, i) => p.getProject(i.caller, param(i, 'id')),
  },
  {
    method: 'PATCH',
    path: '/api/v1/projects/{id}',
    summary: 'Change fields of a project',
    tag: 'Projects',
    params: IdParam,
    body: UpdateProjectRequest,
    response: ProjectResponse,
    handler: (p, i) => p.updateProject(i.caller, param(i, 'id'), i.body as UpdateProjectRequest),
  },
  {
    method: 'DELETE',
    path: '/api/v1/projects/{id}',
    summary: 'Delete a project and everything in it',
    tag: 'Projects',
    params: IdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteProject(i.caller, param(i, 'id')),
  },
  {
    method: 'POST',
    path: '/api/v1/chat/completions',
    summary: 'OpenAI-compatible chat completion: `model` is a project id (the agent) or a model name; `chatId` optional',
    tag: 'Chat completions',
    body: ChatCompletionRequest,
    response: ChatCompletionResponse,
    openai: true,
    handler: (p, i) => p.chatCompletion(i.caller, i.body as ChatCompletionRequest, { form: 'v1', ...(i.signal ? { signal: i.signal } : {}) }),
  },
  {
    method: 'POST',
    path: '/api/v1/ai/chat/completions',
    summary: "Chat-scoped completion: `chatId` required, the chat's project is the agent; answers `success: true` too",
    tag: 'Chat completions',
    body: ChatCompletionRequest,
    response: ChatCompletionResponse,
    openai: true,
    handler: (p, i) => p.chatCompletion(i.caller, i.body as ChatCompletionRequest, { form: 'ai', ...(i.signal ? { signal: i.signal } : {}) }),
  },
  {
    method: 'POST',
    path: '/api/chats',
    summary: 'Create a chat of a project',
    tag: 'Chats',
    body: CreateChatRequest,
    response: ChatResponse,
    status: 201,
    handler: (p, i) => p.createChat(i.caller, i.body as CreateChatRequest),
  },
  {
    method: 'GET',
    path: '/api/chats',
    summary: "List the caller's chats, newest first",
    tag: 'Chats',
    query: ListChatsQuery,
    response: ListChatsResponse,
    handler: (p, i) => p.listChats(i.caller, i.query as unknown as ListChatsQuery),
  },
  {
    method: 'GET',
    path: '/api/chats/{chatId}/messages',
    summary: 'The messages of a chat, in order (with tool calls and results)',
    tag: 'Chats',
    params: ChatIdParam,
    response: ChatMessagesResponse,
    handler: (p, i) => p.chatMessages(i.caller, param(i, 'chatId')),
  },
  {
    method: 'DELETE',
    path: '/api/chats/{chatId}',
    summary: 'Delete a chat and its messages',
    tag: 'Chats',
    params: ChatIdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteChat(i.caller, param(i, 'chatId')),
  },
  {
    method: 'POST',
    path: '/api/chats/{chatId}/streams',
    summary: 'Create a resumable stream of a chat; completions that name it write their chunks there',
    tag: 'Chats',
    params: ChatIdParam,
    body: CreateStreamRequest,
    response: StreamResponse,
    status: 201,
    handler: (p, i) => p.createStream(i.caller, param(i, 'chatId'), i.body),
  },
  {
    method: 'GET',
    path: '/api/chats/{chatId}/streams/{streamId}',
    summary: 'Read a stream as SSE: replays from the start (or after Last-Event-ID) and follows it live until it ends',
    tag: 'Chats',
    params: z.object({ chatId: z.string(), streamId: z.string() }),
    response: z.object({ id: z.number().int(), data: z.string() }),
    replay: true,
    handler: (p, i) =>
      p.readStream(i.caller, param(i, 'chatId'), param(i, 'streamId'), i.headers?.get('last-event-id') ?? undefined, i.signal),
  },
  {
    method: 'POST',
    path: '/api/tools/create',
    summary: 'Create a tool: code defining main(args) in javascript (or python), run sandboxed',
    tag: 'Tools',
    body: CreateToolRequest,
    response: ToolResponse,
    status: 201,
    handler: (p, i) => p.createTool(i.caller, i.body as CreateToolRequest),
  },
  {
    method: 'GET',
    path: '/api/tools',
    summary: "List a project's tools, newest first",
    tag: 'Tools',
    query: ListToolsQuery,
    response: ListToolsResponse,
    handler: (p, i) => p.listTools(i.caller, i.query as unknown as ListToolsQuery),
  },
  {
    method: 'GET',
    path: '/api/tools/{id}',
    summary: 'Get a tool with its code, parameters and dependencies',
    tag: 'Tools',
    params: IdParam,
    response: ToolResponse,
    handler: (p, i) => p.getTool(i.caller, param(i, 'id')),
  },
  {
    method: 'PUT',
    path: '/api/tools/{id}',
    summary: 'Change a tool (toolId must equal the path id): name, description, dependencies, code, parameters',
    tag: 'Tools',
    params: IdParam,
    body: UpdateToolRequest,
    response: MessageResponse,
    handler: (p, i) => p.updateTool(i.caller, param(i, 'id'), i.body as UpdateToolRequest),
  },
  {
    method: 'POST',
    path: '/api/tools/{id}/activate',
    summary: 'Enable (activeState true) or disable a tool; toolId must equal the path id',
    tag: 'Tools',
    params: IdParam,
    body: ActivateToolRequest,
    response: MessageResponse,
    handler: (p, i) => p.activateTool(i.caller, param(i, 'id'), i.body as ActivateToolRequest),
  },
  {
    method: 'DELETE',
    path: '/api/tools/{id}',
    summary: 'Delete a tool',
    tag: 'Tools',
    params: IdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteTool(i.caller, param(i, 'id')),
  },
  {
    method: 'POST',
    path: '/api/tools/{id}/run',
    summary: "Run a tool with args; a failing tool answers success false with the tool's error",
    tag: 'Tools',
    params: IdParam,
    body: RunToolRequest,
    response: RunToolResponse,
    handler: (p, i) => p.runTool(i.caller, param(i, 'id'), i.body as RunToolRequest, i.signal),
  },
  {
    method: 'POST',
    path: '/api/mcp/add-server',
    summary: 'Add an MCP server to a project (connects once and lists its tools first; stdio only where the operator allows it)',
    tag: 'MCP servers',
    body: AddMcpServerRequest,
    response: AddMcpServerResponse,
    status: 201,
    handler: (p, i) => p.addMcpServer(i.caller, i.body as AddMcpServerRequest, i.signal),
  },
  {
    method: 'GET',
    path: '/api/mcp/servers',
    summary: "List a project's MCP servers, newest first",
    tag: 'MCP servers',
    query: ListMcpServersQuery,
    response: ListMcpServersResponse,
    handler: (p, i) => p.listMcpServers(i.caller, i.query as ListMcpServersQuery),
  },
  {
    method: 'GET',
    path: '/api/mcp/servers/{id}',
    summary: 'Get an MCP server configuration (header and environment values are never shown)',
    tag: 'MCP servers',
    params: IdParam,
    response: McpServerResponse,
    handler: (p, i) => p.getMcpServer(i.caller, param(i, 'id')),
  },
  {
    method: 'GET',
    path: '/api/mcp/servers/{id}/tools',
    summary: "List an MCP server's tools (over its shared connection)",
    tag: 'MCP servers',
    params: IdParam,
    response: McpToolsResponse,
    handler: (p, i) => p.listMcpTools(i.caller, param(i, 'id'), i.signal),
  },
  {
    method: 'DELETE',
    path: '/api/mcp/servers/{id}',
    summary: 'Disconnect and delete an MCP server configuration',
    tag: 'MCP servers',
    params: IdParam,
    response: DeleteMcpServerResponse,
    handler: (p, i) => p.deleteMcpServer(i.caller, param(i, 'id')),
  },
  {
    method: 'POST',
    path: '/api/mcp/detect-transport',
    summary: 'Probe a URL for the MCP transports it speaks (streamable HTTP, then legacy SSE); 502 "Unable to detect transport types" when neither answers',
    tag: 'MCP servers',
    body: DetectTransportRequest,
    response: DetectTransportResponse,
    handler: (p, i) => p.detectMcpTransport(i.caller, i.body as DetectTransportRequest, i.signal),
  },
  {
    method: 'GET',
    path: '/api/v1/localmodel/list-models',
    summary: 'List the models installed in the local model runtime (Ollama) at baseUrl',
    tag: 'Local models',
    query: ListLocalModelsQuery,
    response: ListLocalModelsResponse,
    errorShape: { field: 'error', extra: { models: [] } },
    handler: (p, i) => p.listLocalModels(i.caller, i.query as ListLocalModelsQuery),
  },
  {
    method: 'DELETE',
    path: '/api/v1/localmodel/delete-model',
    summary: 'Delete one model (exact name with tag) from the local model runtime; irreversible',
    tag: 'Local models',
    body: DeleteLocalModelRequest,
    response: DeleteLocalModelResponse,
    errorShape: { field: 'error' },
    handler: (p, i) => p.deleteLocalModel(i.caller, i.body as DeleteLocalModelRequest),
  },
  {
    method: 'POST',
    path: '/api/v1/credentials',
    summary: 'Store a provider credential (the key is encrypted and never returned)',
    tag: 'Credentials',
    body: CreateCredentialRequest,
    response: CredentialResponse,
    status: 201,
    handler: (p, i) => p.createCredential(i.caller, i.body as CreateCredentialRequest),
  },
  {
    method: 'GET',
    path: '/api/v1/credentials',
    summary: "List the caller's credentials (no secrets)",
    tag: 'Credentials',
    response: ListCredentialsResponse,
    handler: (p, i) => p.listCredentials(i.caller),
  },
  {
    method: 'GET',
    path: '/api/v1/credentials/{id}',
    summary: 'Get a credential (no secret)',
    tag: 'Credentials',
    params: IdParam,
    response: CredentialResponse,
    handler: (p, i) => p.getCredential(i.caller, param(i, 'id')),
  },
  ...(['/api/v1/credentials/{id}', '/api/credentials/{id}'] as const).map(
    (path): ApiRoute => ({
      method: 'PATCH',
      path,
      summary:
        path === '/api/credentials/{id}'
          ? 'Same as PATCH /api/v1/credentials/{id} (the path the spec writes without /v1)'
          : 'Change name, apiKey, isValid or proxy of a credential (only the members given)',
      tag: 'Credentials',
      params: IdParam,
      body: UpdateCredentialRequest,
      response: MessageResponse,
      handler: (p, i) => p.updateCredential(i.caller, param(i, 'id'), i.body as UpdateCredentialRequest),
    }),
  ),
  {
    method: 'DELETE',
    path: '/api/v1/credentials/{id}',
    summary: 'Delete a credential',
    tag: 'Credentials',
    params: IdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteCredential(i.caller, param(i, 'id')),
  },
  {
    method: 'POST',
    path: '/api/knowledge/documents',
    summary: 'Add a document (text) and index it; answers completed, processing or failed',
    tag: 'Knowledge',
    body: CreateDocumentRequest,
    bodyLimit: 'upload',
    response: CreateDocumentResponse,
    handler: (p, i) => p.createDocument(i.caller, i.body as CreateDocumentRequest),
  },
  {
    method: 'POST',
    path: '/api/knowledge/documents/stream',
    summary: 'Add a document and follow its indexing as Server-Sent Events (progress 10, 30, 60, 90, then complete 100 or error)',
    tag: 'Knowledge',
    body: CreateDocumentRequest,
    bodyLimit: 'upload',
    sse: true,
    response: IndexingEventSchema,
    handler: (p, i) => p.createDocumentStream(i.caller, i.body as CreateDocumentRequest),
  },
  {
    method: 'GET',
    path: '/api/knowledge/documents',
    summary: "List a project's documents, newest first",
    tag: 'Knowledge',
    query: ListDocumentsQuery,
    response: ListDocumentsResponse,
    handler: (p, i) => p.listDocuments(i.caller, i.query as unknown as ListDocumentsQuery),
  },
  {
    method: 'GET',
    path: '/api/knowledge/documents/{id}',
    summary: 'Get a document with its status, counts and metadata',
    tag: 'Knowledge',
    params: IdParam,
    response: DocumentResponse,
    handler: (p, i) => p.getDocument(i.caller, param(i, 'id')),
  },
  {
    method: 'DELETE',
    path: '/api/knowledge/documents/{id}',
    summary: 'Delete a document with its chunks and vectors (also while it is being indexed)',
    tag: 'Knowledge',
    params: IdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteDocument(i.caller, param(i, 'id')),
  },
  {
    method: 'POST',
    path: '/api/knowledge/upload',
    summary: 'Upload files (multipart: projectId, files) and index each as a document',
    tag: 'Knowledge',
    body: UploadForm,
    bodyKind: 'multipart',
    bodyLimit: 'upload',
    response: UploadResponse,
    handler: (p, i) => p.uploadFiles(i.caller, i.body as UploadRequest),
  },
  {
    method: 'POST',
    path: '/api/knowledge/search',
    summary: "Search a project's knowledge: semantic, mrr (diverse) or hybrid (BM25 + vectors, weighted by alpha)",
    tag: 'Knowledge',
    body: SearchRequest,
    response: SearchResponse,
    handler: (p, i) => p.searchKnowledge(i.caller, i.body as SearchRequest),
  },
  {
    method: 'PUT',
    path: '/api/knowledge/settings',
    summary: "Replace a project's knowledge (RAG) settings",
    tag: 'Knowledge',
    body: PutSettingsRequest,
    response: MessageResponse,
    handler: (p, i) => p.putKnowledgeSettings(i.caller, i.body as PutSettingsRequest),
  },
  {
    method: 'GET',
    path: '/api/knowledge/settings',
    summary: "A project's knowledge (RAG) settings, secrets redacted",
    tag: 'Knowledge',
    query: GetSettingsQuery,
    response: KnowledgeSettingsResponse,
    handler: (p, i) => p.getKnowledgeSettings(i.caller, i.query as unknown as GetSettingsQuery),
  },
];

export const HealthResponse = z.object({ status: z.literal('ok') });
