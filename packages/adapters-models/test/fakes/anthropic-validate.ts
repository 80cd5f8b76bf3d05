import { createHmac } from 'node:crypto';

/**
 * The signature of a thinking block: the API signs each block it streams and refuses a block
 * sent back whose signature does not match its text. Here an HMAC of the text under the fake's
 * own key stands for it (opaque to clients, as the real one is).
 */
export const signThinking = (thinking: string): string => createHmac('sha256', 'the-fake-anthropic-signing-key').update(thinking).digest('base64');

/** An error answer of the Messages API: its status and its `error.type` and `error.message`. */
export interface MessagesError {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

/** The request fields the Messages API takes; another is refused ("Extra inputs are not permitted"). */
const KNOWN = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_k',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'output_config',
  'cache_control',
  'context_management',
  'inference_geo',
]);
const BLOCKS = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const bad = (message: string): MessagesError => ({ status: 400, type: 'invalid_request_error', message });
const blocksOf = (content: unknown): Record<string, unknown>[] => (Array.isArray(content) ? content.filter(isObject) : []);

function checkBlock(block: Record<string, unknown>, at: string): MessagesError | undefined {
  if (!BLOCKS.has(String(block.type))) return bad(`${at}.type: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags`);
  if (block.type === 'text' && typeof block.text !== 'string') return bad(`${at}.text.text: Field required`);
  if (block.type === 'image') {
    const source = isObject(block.source) ? block.source : {};
    if (source.type !== 'base64' && source.type !== 'url') return bad(`${at}.image.source: Field required`);
    if (source.type === 'base64' && !IMAGE_TYPES.includes(String(source.media_type))) {
      return bad(`${at}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`);
    }
    if (source.type === 'base64' && (typeof source.data !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(source.data))) return bad(`${at}.image.source.base64.data: invalid base64 data`);
  }
  if (block.type === 'thinking') {
    if (typeof block.thinking !== 'string') return bad(`${at}.thinking.thinking: Field required`);
    if (typeof block.signature !== 'string') return bad(`${at}.thinking.signature: Field required`);
    if (block.signature !== signThinking(block.thinking)) return bad(`${at}: Invalid \`signature\` in \`thinking\` block`);
  }
  if (block.type === 'redacted_thinking' && typeof block.data !== 'string') return bad(`${at}.redacted_thinking.data: Field required`);
  if (block.type === 'tool_use' && (typeof block.id !== 'string' || typeof block.name !== 'string' || !isObject(block.input))) return bad(`${at}.tool_use.input: Input should be a valid dictionary`);
  if (block.type === 'tool_result' && typeof block.tool_use_id !== 'string') return bad(`${at}.tool_result.tool_use_id: Field required`);
  return undefined;
}

/** The conversation: roles, blocks, and each `tool_result` answering a `tool_use` of the message before it (and every `tool_use` answered). */
function checkMessages(messages: unknown): MessagesError | undefined {
  if (!Array.isArray(messages)) return bad('messages: Field required');
  if (messages.length === 0) return bad('messages: at least one message is required');
  let pending: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant')) return bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return bad(`messages.${i}.content: Input should be a valid list`);
    const blocks = blocksOf(m.content);
    for (const [j, block] of blocks.entries()) {
      const problem = checkBlock(block, `messages.${i}.content.${j}`);
      if (problem) return problem;
    }
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
    const stray = results.find((r) => !pending.includes(r));
    if (m.role === 'user' && stray) {
      return bad(
        `messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
      );
    }
    const missing = pending.filter((p) => !results.includes(p));
    if (missing.length > 0) {
      return bad(
        `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
    pending = m.role === 'assistant' ? blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : [];
  }
  return undefined;
}

function checkTools(body: Record<string, unknown>): MessagesError | undefined {
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return bad('tools: Input should be a valid list');
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool) || typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) return bad(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
      if (!isObject(tool.input_schema)) return bad(`tools.${i}.custom.input_schema: Field required`);
      if (tool.input_schema.type !== 'object') return bad(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
    }
  }
  if (body.tool_choice !== undefined) {
    const choice = body.tool_choice;
    if (!isObject(choice) || !['auto', 'any', 'tool', 'none'].includes(String(choice.type)))
      return bad("tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'");
    if (choice.type === 'tool' && typeof choice.name !== 'string') return bad('tool_choice.tool.name: Field required');
    if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean')
      return bad(`tool_choice.${choice.type}.disable_parallel_tool_use: Input should be a valid boolean`);
  }
  return undefined;
}

function checkSettings(body: Record<string, unknown>): MessagesError | undefined {
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return bad(body.max_tokens === undefined ? 'max_tokens: Field required' : 'max_tokens: Input should be a valid integer');
  if (body.temperature !== undefined && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)) return bad('temperature: Input should be less than or equal to 1');
  if (body.system !== undefined && typeof body.system !== 'string' && !(Array.isArray(body.system) && body.system.every((b) => isObject(b) && b.type === 'text')))
    return bad('system: Input should be a valid list');
  if (body.thinking !== undefined) {
    const thinking = isObject(body.thinking) ? body.thinking : {};
    if (thinking.type === 'enabled') {
      if (!Number.isInteger(thinking.budget_tokens)) return bad('thinking.enabled.budget_tokens: Field required');
      if ((thinking.budget_tokens as number) < 1024) return bad('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if ((thinking.budget_tokens as number) >= (body.max_tokens as number)) return bad('`max_tokens` must be greater than `thinking.budget_tokens`');
    } else if (thinking.type !== 'disabled' && thinking.type !== 'adaptive') return bad("thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'");
  }
  if (body.cache_control !== undefined && !(isObject(body.cache_control) && body.cache_control.type === 'ephemeral')) return bad("cache_control.type: Input should be 'ephemeral'");
  const format = isObject(body.output_config) ? body.output_config.format : undefined;
  if (format !== undefined && !(isObject(format) && format.type === 'json_schema' && isObject(format.schema))) return bad('output_config.format.json_schema.schema: Field required');
  return undefined;
}

/** With thinking enabled, a final assistant message that uses tools must start with its thinking block (as the model gave it, signed). */
function checkThinkingTurn(body: Record<string, unknown>): MessagesError | undefined {
  if (!isObject(body.thinking) || body.thinking.type !== 'enabled' || !Array.isArray(body.messages)) return undefined;
  const index = body.messages.findLastIndex((m) => isObject(m) && m.role === 'assistant');
  const blocks = blocksOf((body.messages[index] as Record<string, unknown> | undefined)?.content);
  if (!blocks.some((b) => b.type === 'tool_use') || blocks[0]?.type === 'thinking' || blocks[0]?.type === 'redacted_thinking') return undefined;
  return bad(
    `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(blocks[0]?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`,
  );
}

/** With thinking on, tool use may not be forced (`tool_choice` `any` or `tool`): only `auto` and `none` are taken. */
function checkThinkingChoice(body: Record<string, unknown>): MessagesError | undefined {
  const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  if (!isObject(body.thinking) || body.thinking.type !== 'enabled' || (choice !== 'any' && choice !== 'tool')) return undefined;
  return bad('Thinking may not be enabled when tool_choice forces tool use.');
}

/** What the Messages API answers a request body with when it refuses it, or undefined when it takes it. */
export function checkMessagesRequest(body: Record<string, unknown>, options: { readonly models: readonly string[]; readonly contextChars: number }): MessagesError | undefined {
  if (typeof body.model !== 'string') return bad('model: Field required');
  const extra = Object.keys(body).find((key) => !KNOWN.has(key));
  if (extra) return bad(`${extra}: Extra inputs are not permitted`);
  const problem = checkSettings(body) ?? checkMessages(body.messages) ?? checkTools(body) ?? checkThinkingChoice(body) ?? checkThinkingTurn(body);
  if (problem) return problem;
  if (!options.models.includes(body.model)) return { status: 404, type: 'not_found_error', message: `model: ${body.model}` };
  const chars = JSON.stringify(body.messages).length + JSON.stringify(body.system ?? '').length;
  if (chars > options.contextChars) return bad(`prompt is too long: ${Math.ceil(chars / 4)} tokens > ${Math.ceil(options.contextChars / 4)} maximum`);
  return undefined;
}
