import type { ElicitationAnswer, ElicitationRequest } from '../agent/questions.js';
import type { ToolSampleRequest, ToolSampleResult } from '../agent/tools.js';

/**
 * The MCP plug-in interface: connections to Model Context Protocol servers (stdio, streamable
 * HTTP, legacy SSE), their tools, and transport detection. Implemented over the official SDK in
 * `@agent-platform/mcp`. URLs are connected to through the platform's outbound policy; stdio
 * commands only where the operator allowed them.
 */

export type McpTransport = 'stdio' | 'http' | 'sse';

/** How to reach one MCP server. */
export interface McpServerConfig {
  readonly transport: McpTransport;
  /** `http` and `sse`: the endpoint (`http://host:port/mcp`, `.../sse`). */
  readonly url?: string;
  /** `http` and `sse`: headers sent with every request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** `stdio`: the program to start and its arguments. */
  readonly command?: string;
  readonly args?: readonly string[];
  /** `stdio`: environment of the program, added to a minimal one (PATH, HOME, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Declare the `sampling` capability and answer the server's `sampling/createMessage` requests
   * during a tool call with the `sample` of that call (the project's model). Default false: the
   * capability is not declared and such requests are refused.
   */
  readonly allowSampling?: boolean;
}

/** One tool a server offers. */
export interface McpTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly inputSchema: Record<string, unknown>;
}

/** A tool call's outcome: its content as text (text parts joined; other parts summarised). */
export interface McpToolResult {
  readonly text: string;
  /** The server said the call failed (`isError`). */
  readonly isError: boolean;
}

export interface McpProbe {
  /** What the server says it is (`initialize`). */
  readonly serverInfo: { readonly name: string; readonly version: string };
  readonly tools: readonly McpTool[];
}

export interface McpDetection {
  /** Transports that answered at the URL: `http` (streamable HTTP) and/or `sse`. */
  readonly supportedTypes: readonly McpTransport[];
  /** `http` when it answered, else `sse`; undefined when neither did. */
  readonly recommended: McpTransport | undefined;
}

export interface McpConnector {
  /**
   * Connects once, lists the tools and disconnects: checks a configuration before it is saved.
   * Rejects with a `PlatformError`: `invalid_request` for a URL the outbound policy refuses or a
   * stdio command the operator did not allow, `unavailable` when nothing answers, `upstream_error`
   * when what answers is not an MCP server, `timeout`.
   */
  probe(config: McpServerConfig, options?: { readonly signal?: AbortSignal }): Promise<McpProbe>;
  /**
   * The tools of a saved server, over its shared connection (opened on first use, re-opened
   * after a failure with backoff). Listed once per connection and kept until the server sends
   * `notifications/tools/list_changed`; a new connection (after a failure, a changed
   * configuration or `disconnect`) lists again. Callers arriving while a listing runs share it.
   * Rejects as `probe`.
   */
  listTools(serverId: string, config: McpServerConfig, options?: { readonly signal?: AbortSignal }): Promise<readonly McpTool[]>;
  /**
   * Calls a tool over the shared connection. `timeoutMs` bounds the call (default the
   * connector's); a server that hangs or fails makes this reject with a `PlatformError`
   * (`timeout`, `unavailable`, `upstream_error`); a tool that reports an error resolves with
   * `isError: true`.
   */
  callTool(
    serverId: string,
    config: McpServerConfig,
    call: {
      readonly name: string;
      readonly args: unknown;
      readonly timeoutMs?: number;
      readonly signal?: AbortSignal;
      /** Answers the server's `sampling/createMessage` requests while this call runs (with `config.allowSampling`). */
      readonly sample?: (request: ToolSampleRequest) => Promise<ToolSampleResult>;
      /**
       * Answers the server's `elicitation/create` requests (form mode) while this call runs; the
       * call's time limit stands still while one waits. Without it the client declines them.
       * With several calls of one server running, a question goes to the oldest that can answer.
       */
      readonly elicit?: (request: ElicitationRequest) => Promise<ElicitationAnswer>;
    },
  ): Promise<McpToolResult>;
  /** Closes a server's shared connection (after it is deleted). Never rejects. */
  disconnect(serverId: string): Promise<void>;
  /**
   * Which transports answer at `url`: a streamable HTTP `initialize` POST, then the legacy SSE
   * handshake (a GET whose event stream names an `endpoint`), each within a short timeout.
   * Rejects only for a URL the outbound policy refuses (`invalid_request`).
   */
  detectTransport(url: string, options?: { readonly signal?: AbortSignal }): Promise<McpDetection>;
  /** Closes every connection (the service stops). */
  close(): Promise<void>;
}

export interface McpOptions {
  readonly connector: McpConnector;
  /** Time limit of one tool call made by the agent. Default: the connector's. */
  readonly callTimeoutMs?: number;
  /** Time limit of listing a server's tools for a completion; a server slower than that is left out. Default 5000 ms. */
  readonly listTimeoutMs?: number;
}
