import { MCP_TOOL_PREFIX } from '../agent/tools.js';
import { randomString } from '../ids.js';
import type { CompletionMessage } from '../schemas/completions.js';
import type { InputItem } from '../schemas/response-inputs.js';

/** A stored input item: as sent, with the id the service gave it (`GET .../input_items`). */
export type StoredInputItem = {
  readonly type: 'message' | 'function_call' | 'function_call_output' | 'mcp_approval_response' | 'mcp_call' | 'agent_platform:tool_call' | 'agent_platform:elicitation_response';
  readonly id: string;
  readonly [key: string]: unknown;
};

type ChatToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };
type UserPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

const partsText = (parts: readonly { type: string; text?: string; refusal?: string }[]) => parts.map((p) => p.text ?? p.refusal ?? '').join('');

type ServerCall = Extract<InputItem, { type: 'mcp_call' | 'agent_platform:tool_call' }>;

/** A server-run call sent back, as the model made it (`mcp__<server>__<tool>` for an MCP tool) and its result. */
function serverCall(item: ServerCall): { call: ChatToolCall; result: CompletionMessage } {
  const id = item.call_id ?? item.id ?? `call_${randomString(24)}`;
  const name = item.type === 'mcp_call' ? `${MCP_TOOL_PREFIX}${item.server_label}__${item.name}` : item.name;
  const error = typeof item.error === 'string' ? item.error : item.error ? JSON.stringify(item.error) : undefined;
  return {
    call: { id, type: 'function', function: { name, arguments: item.arguments } },
    result: { role: 'tool', tool_call_id: id, content: error !== undefined ? `Error: ${error}` : (item.output ?? '') },
  };
}

/** A user message's part for the model: a file (read into text before, or no longer stored) as text. */
const userPart = (p: Exclude<Extract<InputItem, { role: 'user' }>['content'], string>[number]): UserPart => {
  if (p.type === 'input_text') return { type: 'text', text: p.text };
  if (p.type === 'input_image') return { type: 'image_url', image_url: { url: p.image_url } };
  return { type: 'text', text: `[the file ${'filename' in p ? (p.filename ?? '') : ''} is no longer stored]` };
};

/** A data: image's URL is not kept with a stored response (its bytes can be megabytes): the item says `image_url: null`. */
const kept = (url: string | null) => (url?.startsWith('data:') ? null : url);

/**
 * The request's input (a string, or items) as the chat completion's messages the planner takes:
 * a string is a user message; `input_image` parts are `image_url` parts; `function_call` items
 * join the assistant message before them (or make one) as its tool calls; a
 * `function_call_output` is a tool message; a server-run call sent back (`mcp_call`,
 * `agent_platform:tool_call`) is the call and its result; reasoning items and requests sent back
 * are left out (a model's earlier reasoning is not given back to it). `input_file` parts were
 * read into text before (a stored one is said to be no longer there).
 */
export function toCompletionMessages(input: string | readonly InputItem[]): CompletionMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: CompletionMessage[] = [];
  let calls: ChatToolCall[] | undefined;
  // The results of server-run calls sent back, after the assistant message of their calls.
  let results: CompletionMessage[] = [];
  const addCall = (call: ChatToolCall) => {
    if (calls) calls.push(call);
    else {
      calls = [call];
      messages.push({ role: 'assistant', content: null, tool_calls: calls });
    }
  };
  for (const item of input) {
    if (item.type === 'function_call') {
      addCall({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
      continue;
    }
    if (item.type === 'mcp_call' || item.type === 'agent_platform:tool_call') {
      const { call, result } = serverCall(item);
      addCall(call);
      results.push(result);
      continue;
    }
    messages.push(...results);
    results = [];
    if (item.type === 'function_call_output') {
      calls = undefined;
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: typeof item.output === 'string' ? item.output : partsText(item.output) });
      continue;
    }
    // Reasoning items are not given back; item references and compactions were refused by the schema.
    if (item.type !== undefined && item.type !== 'message') continue;
    calls = undefined;
    if (item.role === 'user') {
      const content = typeof item.content === 'string' ? item.content : item.content.map(userPart);
      messages.push({ role: 'user', content });
    } else if (item.role === 'assistant') {
      const assistant = { role: 'assistant' as const, content: typeof item.content === 'string' ? item.content : partsText(item.content) };
      messages.push(assistant);
      // Function calls right after an answer's text are that answer's tool calls.
      calls = [];
      (assistant as { tool_calls?: ChatToolCall[] }).tool_calls = calls;
    } else {
      messages.push({ role: item.role, content: typeof item.content === 'string' ? item.content : partsText(item.content) });
    }
  }
  messages.push(...results);
  // An assistant message that got no calls has none.
  for (const m of messages) if (m.role === 'assistant' && m.tool_calls?.length === 0) delete (m as { tool_calls?: unknown }).tool_calls;
  return messages;
}

/**
 * The input as the response keeps it: each item with an id (`msg_`, `fc_`, `fco_` and random
 * characters), a string as a user message of one `input_text` part, reasoning items and
 * requests sent back left out, data: image URLs and files' data not kept.
 */
export function storedInputItems(input: string | readonly InputItem[]): StoredInputItem[] {
  const id = (prefix: string) => `${prefix}_${randomString(24)}`;
  if (typeof input === 'string') return [{ type: 'message', id: id('msg'), role: 'user', status: 'completed', content: [{ type: 'input_text', text: input }] }];
  return input.flatMap((item): StoredInputItem[] => {
    if (item.type === 'reasoning') return [];
    if (item.type === 'function_call') {
      return [{ type: 'function_call', id: id('fc'), call_id: item.call_id, name: item.name, arguments: item.arguments, status: 'completed' }];
    }
    if (item.type === 'function_call_output') return [{ type: 'function_call_output', id: id('fco'), call_id: item.call_id, output: item.output, status: 'completed' }];
    if (item.type === 'mcp_approval_response') {
      return [{ type: 'mcp_approval_response', id: id('mcpr'), approval_request_id: item.approval_request_id, approve: item.approve, reason: item.reason ?? null }];
    }
    if (item.type === 'agent_platform:elicitation_response') {
      const { id: _, ...answer } = item;
      return [{ ...answer, id: id('elr'), content: item.content ?? null, reason: item.reason ?? null }];
    }
    if (item.type === 'mcp_call' || item.type === 'agent_platform:tool_call') {
      const { id: _, ...call } = item;
      return [{ ...call, id: item.id ?? id(item.type === 'mcp_call' ? 'mcp' : 'tc'), output: item.output ?? null, error: item.error ?? null, status: item.status ?? 'completed' }];
    }
    if (item.type !== undefined && item.type !== 'message') return [];
    const content =
      typeof item.content === 'string'
        ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content, ...(item.role === 'assistant' ? { annotations: [] } : {}) }]
        : item.content.map((p) =>
            p.type === 'input_image'
              ? { type: 'input_image', image_url: kept(p.image_url), detail: p.detail ?? 'auto' }
              : p.type === 'input_file'
                ? { type: 'input_file', filename: p.filename ?? null, file_url: p.file_url ?? null, file_id: p.file_id ?? null }
                : { ...p },
          );
    return [{ type: 'message', id: id('msg'), role: item.role, status: 'completed', content }];
  });
}

/**
 * Stored items (a response's input, or its output) back as messages for the model, for a chain
 * of responses without a chat (a plain model): an image that was not kept is said so in text.
 */
export function storedToMessages(items: readonly StoredInputItem[]): CompletionMessage[] {
  const input = items.flatMap((item): InputItem[] => {
    if (item.type !== 'message') return [item as unknown as InputItem];
    const content = (item.content as { type: string; text?: string; image_url?: string | null }[]).map((p) =>
      p.type === 'input_image' && !p.image_url ? { type: 'input_text', text: '[an image that is no longer stored]' } : p,
    );
    return [{ ...item, content } as unknown as InputItem];
  });
  return toCompletionMessages(input);
}
