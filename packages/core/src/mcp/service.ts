import type { z } from 'zod';
import { type Caller, callerProject, type PlatformContext } from '../context.js';
import { isPlatformError, PlatformError } from '../errors.js';
import { displayUrl } from '../net/display.js';
import { offsetPageFields } from '../paging.js';
import type {
  AddMcpServerRequest,
  AddMcpServerResponse,
  DetectTransportRequest,
  DetectTransportResponse,
  ListMcpServersQuery,
  ListMcpServersResponse,
  McpServerResponse,
  McpToolsResponse,
  UpdateMcpServerRequest,
} from '../schemas/mcp.js';
import { newServerRecord, serverConfig, toServerView, toToolView } from './records.js';
import type { McpOptions, McpServerConfig } from './types.js';

type AddBody = z.output<typeof AddMcpServerRequest>;
type ListQuery = z.output<typeof ListMcpServersQuery>;
type DetectBody = z.output<typeof DetectTransportRequest>;
type UpdateBody = z.output<typeof UpdateMcpServerRequest>;

/** The notifier channel of deleted MCP servers, `{ serverId }`: every instance closes its connection to it. */
export const MCP_DELETED_CHANNEL = 'mcp.server-deleted';

/** A connector failure as the add route answers it: the policy's refusal and timeouts as they are, the rest named. */
export function probeError(error: unknown, config: McpServerConfig): PlatformError {
  if (isPlatformError(error)) return error;
  const where = config.transport === 'stdio' ? `command ${config.command}` : displayUrl(config.url ?? '');
  return new PlatformError('upstream_error', `MCP server (${where}) failed: ${(error as Error).message ?? String(error)}`, { cause: error });
}

/**
 * A project's MCP servers: each is connected to once before it is saved, its secrets sealed at
 * rest, its connection shared and closed on every instance when it (or its project) is deleted.
 */
export class McpService {
  readonly #ctx: PlatformContext;
  readonly #mcp: McpOptions | undefined;
  readonly #unsubscribe: (() => void) | undefined;

  /** Without `mcp`, every call answers `unsupported`. */
  constructor(ctx: PlatformContext, mcp: McpOptions | undefined) {
    this.#ctx = ctx;
    this.#mcp = mcp;
    if (mcp) {
      // A server deleted through any instance: each instance closes its own connection to it.
      this.#unsubscribe = ctx.notifier.subscribe(MCP_DELETED_CHANNEL, (payload) => {
        const serverId = (payload as { serverId?: unknown } | null)?.serverId;
        if (typeof serverId === 'string') mcp.connector.disconnect(serverId).catch(() => {});
      });
    }
  }

  /** Stops hearing of deletes through other instances and closes every connection. */
  async close(): Promise<void> {
    this.#unsubscribe?.();
    await this.#mcp?.connector.close();
  }

  #options(): McpOptions {
    if (!this.#mcp) throw new PlatformError('unsupported', 'MCP is not configured: construct AgentPlatform with `mcp: { connector }`');
    return this.#mcp;
  }

  async #server(caller: Caller, id: string) {
    const server = await this.#ctx.storage.mcpServers.get(caller.userId, id);
    if (!server) throw PlatformError.notFound('MCP server not found');
    return server;
  }

  /**
   * `POST /api/mcp/add-server`: connects once (lists the tools) before saving, so a server that
   * cannot be reached, is not an MCP server, is refused by the outbound policy, or is a stdio
   * command the operator did not allow is never saved.
   */
  async add(caller: Caller, body: AddBody, signal?: AbortSignal): Promise<AddMcpServerResponse> {
    const { storage, caps, clock, ids, secrets } = this.#ctx;
    const mcp = this.#options();
    await callerProject(this.#ctx, caller, body.projectId);
    if ((await storage.mcpServers.forProject(body.projectId)).some((s) => s.name === body.name)) {
      throw new PlatformError('conflict', `An MCP server named "${body.name}" already exists in this project`);
    }
    // Refused before connecting to it; decided when it is written.
    await caps.check(storage, caller.userId, 'mcpServers');
    const config: McpServerConfig =
      body.transport === 'stdio'
        ? { transport: 'stdio', command: body.command ?? '', args: body.args ?? [], ...(body.env ? { env: body.env } : {}) }
        : { transport: body.transport, url: body.url ?? '', ...(body.headers ? { headers: body.headers } : {}) };
    // Probed as it will run: a server may offer tools only to clients that can sample.
    if (body.allowSampling) Object.assign(config, { allowSampling: true });
    let probe: Awaited<ReturnType<typeof mcp.connector.probe>>;
    try {
      probe = await mcp.connector.probe(config, signal ? { signal } : {});
    } catch (error) {
      throw probeError(error, config);
    }
    const now = clock.now();
    const { projectId, name, transport, url, command, args, headers, env, requiresApproval } = body;
    const record = newServerRecord(
      {
        id: ids.next('mcpServer'),
        userId: caller.userId,
        projectId,
        name,
        transport,
        url,
        command,
        args,
        headers,
        env,
        requiresApproval,
        allowSampling: body.allowSampling === true,
        createdAt: now,
        updatedAt: now,
      },
      secrets,
    );
    await storage.transaction(async (tx) => {
      await caps.reserve(tx, caller.userId, 'mcpServers');
      await tx.mcpServers.insert(record);
    });
    return { success: true, server: toServerView(record), tools: probe.tools.map(toToolView) };
  }

  /** `GET /api/mcp/servers?projectId=`: a project's servers, newest first. */
  async list(caller: Caller, q: ListQuery): Promise<ListMcpServersResponse> {
    await callerProject(this.#ctx, caller, q.projectId);
    const page = await this.#ctx.storage.mcpServers.list({ userId: caller.userId, projectId: q.projectId, limit: q.limit, offset: q.offset });
    return {
      success: true,
      servers: page.items.map(toServerView),
      ...offsetPageFields(q.offset, page),
      message: page.total === 0 ? 'No MCP servers found' : `Found ${page.total} MCP server${page.total === 1 ? '' : 's'}`,
    };
  }

  /** `GET /api/mcp/servers/{id}`. */
  async get(caller: Caller, id: string): Promise<McpServerResponse> {
    return { success: true, server: toServerView(await this.#server(caller, id)) };
  }

  /** `PATCH /api/mcp/servers/{id}`: which of its tools' calls wait for a person's approval. */
  async update(caller: Caller, id: string, body: UpdateBody): Promise<McpServerResponse> {
    const updated = await this.#ctx.storage.mcpServers.setRequiresApproval(caller.userId, id, body.requiresApproval, this.#ctx.clock.now());
    if (!updated) throw PlatformError.notFound('MCP server not found');
    return { success: true, server: toServerView(updated) };
  }

  /** `GET /api/mcp/servers/{id}/tools`: what the server offers now, over its shared connection. */
  async tools(caller: Caller, id: string, signal?: AbortSignal): Promise<McpToolsResponse> {
    const server = await this.#server(caller, id);
    const tools = await this.#options().connector.listTools(server.id, serverConfig(server, this.#ctx.secrets), signal ? { signal } : {});
    return {
      success: true,
      tools: tools.map(toToolView),
      message: `${tools.length} tool${tools.length === 1 ? '' : 's'}`,
    };
  }

  /** `DELETE /api/mcp/servers/{id}`: disconnects and deletes the configuration. */
  async delete(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    const mcp = this.#options();
    if (!(await this.#ctx.storage.mcpServers.delete(caller.userId, id))) throw PlatformError.notFound('MCP server not found');
    await this.#disconnectEverywhere(id, mcp);
    return { success: true, message: 'MCP server deleted' };
  }

  /** The MCP part of deleting a project (`ProjectCleanup`): its servers, read before the delete, are disconnected after. */
  async dropProject(_caller: Caller, projectId: string): Promise<() => Promise<void>> {
    const servers = this.#mcp ? await this.#ctx.storage.mcpServers.forProject(projectId) : [];
    return async () => {
      await Promise.all(servers.map((server) => this.#disconnectEverywhere(server.id)));
    };
  }

  /** Closes the connections of every instance to a deleted server: this one's now, the others' when they hear it. */
  async #disconnectEverywhere(serverId: string, mcp = this.#mcp): Promise<void> {
    if (!mcp) return;
    await mcp.connector.disconnect(serverId);
    await this.#ctx.notifier.publish(MCP_DELETED_CHANNEL, { serverId }).catch(() => {
      // Not heard: another instance's connection stays open until it closes, though the server is
      // gone from storage, so no call reaches it through that instance any more.
    });
  }

  /** `POST /api/mcp/detect-transport`: which transports answer at the URL. */
  async detect(_caller: Caller, { url }: DetectBody, signal?: AbortSignal): Promise<DetectTransportResponse> {
    const found = await this.#options().connector.detectTransport(url, signal ? { signal } : {});
    if (found.supportedTypes.length === 0) {
      throw new PlatformError('upstream_error', 'Unable to detect transport types');
    }
    return {
      success: true,
      message: `Detected ${found.supportedTypes.join(' and ')}; recommended: ${found.recommended}`,
      supportedTypes: [...found.supportedTypes],
      recommended: found.recommended ?? null,
    };
  }
}
