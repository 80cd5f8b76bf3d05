import { type McpTool, type McpToolResult, PlatformError } from '@agent-platform/core';
import { exceedsNesting, MAX_NESTING_DEPTH } from '@agent-platform/core/internal';
import type { ContentBlock, Tool } from '@modelcontextprotocol/sdk/types.js';

/** Bytes a base64 string decodes to (without decoding it). */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s+/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** One content part as text: text as is, binary parts summarised, resources by their text or uri. */
function partText(part: ContentBlock): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type}: ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
    case 'resource_link':
      return `[resource: ${part.uri}]`;
    case 'resource': {
      const resource = part.resource;
      if ('text' in resource && typeof resource.text === 'string') return resource.text;
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? `, ${base64Bytes(resource.blob)} bytes` : '';
      return `[resource: ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}${blob}]`;
    }
    default:
      return `[${(part as { type?: unknown }).type ?? 'unknown'} content]`;
  }
}

/**
 * A `tools/call` result as the connector answers it: the parts' text joined with "\n"
 * (`structuredContent` as JSON when no part is text), `isError` as the server said.
 * `structuredContent` nested deeper than `MAX_NESTING_DEPTH` is a tool error naming the limit
 * (the server chooses what it answers; `JSON.stringify` of it would overflow the stack).
 */
export function toToolResult(result: { content?: unknown; structuredContent?: unknown; isError?: unknown }): McpToolResult {
  const parts = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  const texts = parts.map(partText);
  const hasText = parts.some((part) => part.type === 'text');
  if (!hasText && result.structuredContent !== undefined && result.structuredContent !== null) {
    if (exceedsNesting(result.structuredContent)) {
      return { text: `The MCP server answered structuredContent nested deeper than ${MAX_NESTING_DEPTH} levels`, isError: true };
    }
    texts.push(JSON.stringify(result.structuredContent));
  }
  return { text: texts.join('\n'), isError: result.isError === true };
}

/**
 * A tool as the platform lists it: its description (else its title), its arguments' JSON Schema.
 * A schema nested deeper than `MAX_NESTING_DEPTH` is `upstream_error` naming the limit: it would
 * go out in tool listings and model requests, whose `JSON.stringify` would overflow the stack.
 */
export function toMcpTool(tool: Tool): McpTool {
  if (exceedsNesting(tool.inputSchema)) {
    throw new PlatformError('upstream_error', `MCP tool "${tool.name}": inputSchema nested deeper than ${MAX_NESTING_DEPTH} levels`);
  }
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    inputSchema: tool.inputSchema as Record<string, unknown>,
  };
}
