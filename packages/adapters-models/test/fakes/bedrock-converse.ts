import { signThinking } from './anthropic-validate.js';
import type { AwsError } from './sigv4.js';

/**
 * What Bedrock's Converse and ConverseStream check in a request body (the `ConverseStreamRequest`
 * shape of the API reference, and the texts of the ValidationExceptions the service answers for
 * a malformed conversation), for the fake in `bedrock-server.ts`.
 */

export interface FakeGuardrail {
  readonly identifier: string;
  readonly version: string;
  /** A user message containing one of these is blocked: the answer is `blockedInputMessage` with stop reason `guardrail_intervened`. */
  readonly blockedWords: readonly string[];
  readonly blockedInputMessage: string;
}

export interface ConverseLimits {
  readonly guardrails: readonly FakeGuardrail[];
  /** Models that take no images ("This model doesn't support the image field ..."). */
  readonly textOnly: boolean;
}

const invalid = (message: string): AwsError => ({ status: 400, type: 'ValidationException', message });
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const notNull = (path: string) => invalid(`1 validation error detected: Value null at '${path}' failed to satisfy constraint: Member must not be null`);
/** A union (content block, tool, tool choice): exactly one member set. */
const oneMember = (value: Record<string, unknown>): string | undefined => {
  const keys = Object.keys(value).filter((k) => value[k] !== undefined && value[k] !== null);
  return keys.length === 1 ? keys[0] : undefined;
};

const IMAGE_FORMATS = ['png', 'jpeg', 'gif', 'webp'];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function checkBlock(block: unknown, at: string, role: string, limits: ConverseLimits): AwsError | undefined {
  if (!isObject(block)) return invalid(`The ContentBlock object at ${at} is malformed.`);
  const kind = oneMember(block);
  if (!kind)
    return invalid(`The ContentBlock object at ${at} must set exactly one of the following keys: text, image, document, video, toolUse, toolResult, guardContent, cachePoint, reasoningContent.`);
  switch (kind) {
    case 'text':
      if (typeof block.text !== 'string') return invalid(`The text field in the ContentBlock object at ${at} is malformed.`);
      if (block.text.trim() === '') return invalid(`The text field in the ContentBlock object at ${at} is blank. Add text to the text field, and try again.`);
      return undefined;
    case 'image': {
      const image = block.image;
      if (!isObject(image) || !IMAGE_FORMATS.includes(String(image.format))) return invalid(`The format field in the ImageBlock object at ${at}.image must be one of: png, jpeg, gif, webp.`);
      if (!isObject(image.source) || typeof image.source.bytes !== 'string' || image.source.bytes === '' || !BASE64.test(image.source.bytes)) {
        return invalid(`The source field in the ImageBlock object at ${at}.image is malformed: bytes must be base64 encoded.`);
      }
      if (limits.textOnly) return invalid(`This model doesn't support the image field for ${role} messages. Remove image and try again.`);
      return undefined;
    }
    case 'toolUse': {
      const use = block.toolUse;
      if (!isObject(use) || typeof use.toolUseId !== 'string' || typeof use.name !== 'string' || !isObject(use.input)) {
        return invalid(`The toolUse field in the ContentBlock object at ${at} requires toolUseId, name and an input object.`);
      }
      return role === 'assistant' ? undefined : invalid(`The toolUse field in the ContentBlock object at ${at} is only allowed in assistant messages.`);
    }
    case 'toolResult': {
      const result = block.toolResult;
      if (!isObject(result) || typeof result.toolUseId !== 'string' || !Array.isArray(result.content)) return notNull(`${at}.toolResult.content`);
      for (const [i, part] of result.content.entries()) {
        if (!isObject(part) || !['text', 'json', 'image', 'document', 'video'].includes(oneMember(part) ?? '')) {
          return invalid(`The ToolResultContentBlock object at ${at}.toolResult.content.${i} is malformed.`);
        }
      }
      return role === 'user' ? undefined : invalid(`The toolResult field in the ContentBlock object at ${at} is only allowed in user messages.`);
    }
    case 'reasoningContent': {
      // Claude's reasoning sent back: its text with the signature it came with (an HMAC of the text here, as the Anthropic fake's), or a redacted block.
      const reasoning = block.reasoningContent;
      const kind = isObject(reasoning) ? oneMember(reasoning) : undefined;
      if (role !== 'assistant') return invalid(`The reasoningContent field in the ContentBlock object at ${at} is only allowed in assistant messages.`);
      if (kind === 'redactedContent') return undefined;
      const text = isObject(reasoning) && isObject(reasoning.reasoningText) ? reasoning.reasoningText : undefined;
      if (kind !== 'reasoningText' || typeof text?.text !== 'string')
        return invalid(`The ReasoningContentBlock object at ${at}.reasoningContent must set exactly one of reasoningText, redactedContent.`);
      if (typeof text.signature !== 'string' || text.signature !== signThinking(text.text)) return invalid(`${at}: Invalid \`signature\` in \`thinking\` block`);
      return undefined;
    }
    case 'cachePoint':
    case 'guardContent':
    case 'document':
    case 'video':
      return undefined;
    default:
      return invalid(`The ContentBlock object at ${at} has an unknown key: ${kind}.`);
  }
}

function checkMessages(messages: unknown, limits: ConverseLimits): { error?: AwsError; usesTools: boolean } {
  if (messages === undefined || messages === null) return { error: notNull('messages'), usesTools: false };
  if (!Array.isArray(messages)) return { error: invalid('The messages field must be a list of Message objects.'), usesTools: false };
  let usesTools = false;
  /** The tool use ids of the previous assistant turn not yet answered. */
  let open: string[] = [];
  for (const [i, message] of messages.entries()) {
    const at = `messages.${i}`;
    if (!isObject(message)) return { error: invalid(`The Message object at ${at} is malformed.`), usesTools };
    if (message.role !== 'user' && message.role !== 'assistant')
      return {
        error: invalid(`1 validation error detected: Value '${String(message.role)}' at '${at}.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`),
        usesTools,
      };
    if (i === 0 && message.role !== 'user') return { error: invalid('A conversation must start with a user message. Try again with a conversation that starts with a user message.'), usesTools };
    if (i > 0 && (messages[i - 1] as Record<string, unknown>).role === message.role) {
      return { error: invalid('A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.'), usesTools };
    }
    if (!Array.isArray(message.content) || message.content.length === 0) {
      return { error: invalid(`The content field in the Message object at ${at} is empty. Add a ContentBlock object to the content field and try again.`), usesTools };
    }
    for (const [j, block] of message.content.entries()) {
      const error = checkBlock(block, `${at}.content.${j}`, message.role, limits);
      if (error) return { error, usesTools };
    }
    const blocks = message.content as Record<string, unknown>[];
    const results = blocks.flatMap((b) => (isObject(b.toolResult) ? [String(b.toolResult.toolUseId)] : []));
    if (message.role === 'user') {
      if (results.length > open.length) return { error: invalid(`The number of toolResult blocks at ${at}.content exceeds the number of toolUse blocks of previous turn.`), usesTools };
      const missing = open.filter((id) => !results.includes(id));
      if (missing.length > 0) return { error: invalid(`Expected toolResult blocks at ${at}.content for the following Ids: ${missing.join(', ')}`), usesTools };
      open = [];
    } else {
      open = blocks.flatMap((b) => (isObject(b.toolUse) ? [String(b.toolUse.toolUseId)] : []));
    }
    if (results.length > 0 || open.length > 0) usesTools = true;
  }
  return { usesTools };
}

function checkToolConfig(config: unknown): AwsError | undefined {
  if (!isObject(config)) return invalid('The toolConfig field is malformed.');
  if (!Array.isArray(config.tools) || config.tools.length === 0) return invalid('The toolConfig field must contain at least one tool.');
  const names: string[] = [];
  for (const [i, tool] of config.tools.entries()) {
    const at = `toolConfig.tools.${i}`;
    if (!isObject(tool) || !oneMember(tool)) return invalid(`The Tool object at ${at} must set exactly one of toolSpec, systemTool, cachePoint.`);
    if (tool.cachePoint !== undefined) continue;
    const spec = tool.toolSpec;
    if (!isObject(spec) || typeof spec.name !== 'string') return notNull(`${at}.toolSpec.name`);
    if (!TOOL_NAME.test(spec.name))
      return invalid(`1 validation error detected: Value '${spec.name}' at '${at}.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+`);
    if (!isObject(spec.inputSchema) || !isObject(spec.inputSchema.json)) return notNull(`${at}.toolSpec.inputSchema`);
    if (names.includes(spec.name)) return invalid(`The toolConfig field contains duplicate tool names: ${spec.name}.`);
    names.push(spec.name);
  }
  const choice = config.toolChoice;
  if (choice !== undefined) {
    const kind = isObject(choice) ? oneMember(choice) : undefined;
    if (kind !== 'auto' && kind !== 'any' && kind !== 'tool') return invalid('The toolChoice field must set exactly one of auto, any, tool.');
    const named = (choice as Record<string, unknown>).tool;
    if (kind === 'tool' && !(isObject(named) && typeof named.name === 'string' && names.includes(named.name))) return invalid('The tool named in toolChoice is not among the tools of toolConfig.');
  }
  return undefined;
}

function checkInference(config: unknown): AwsError | undefined {
  if (config === undefined) return undefined;
  if (!isObject(config)) return invalid('The inferenceConfig field is malformed.');
  const number = (name: string, min: number, max: number, integer = false): AwsError | undefined => {
    const value = config[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || (integer && !Number.isInteger(value)) || value < min || value > max) {
      return invalid(
        `1 validation error detected: Value '${String(value)}' at 'inferenceConfig.${name}' failed to satisfy constraint: Member must have value ${integer ? `greater than or equal to ${min}` : `between ${min} and ${max}`}`,
      );
    }
    return undefined;
  };
  const stops = config.stopSequences;
  if (stops !== undefined && (!Array.isArray(stops) || stops.length > 4 || stops.some((s) => typeof s !== 'string' || s === ''))) {
    return invalid("1 validation error detected: Value at 'inferenceConfig.stopSequences' failed to satisfy constraint: Member must have length less than or equal to 4 non-empty strings");
  }
  return number('maxTokens', 1, Number.MAX_SAFE_INTEGER, true) ?? number('temperature', 0, 1) ?? number('topP', 0, 1);
}

/** The guardrail a request names, or the error of a malformed or unknown one. */
export function guardrailOf(config: unknown, guardrails: readonly FakeGuardrail[]): { guardrail?: FakeGuardrail; trace?: boolean; error?: AwsError } {
  if (config === undefined) return {};
  if (!isObject(config)) return { error: invalid('The guardrailConfig field is malformed.') };
  if (typeof config.guardrailIdentifier !== 'string') return { error: notNull('guardrailConfig.guardrailIdentifier') };
  if (typeof config.guardrailVersion !== 'string') return { error: notNull('guardrailConfig.guardrailVersion') };
  const guardrail = guardrails.find((g) => g.identifier === config.guardrailIdentifier && g.version === config.guardrailVersion);
  if (!guardrail) return { error: invalid('The guardrail identifier or version provided in the request does not exist.') };
  return { guardrail, trace: config.trace === 'enabled' };
}

/**
 * With Claude's thinking on (`additionalModelRequestFields.thinking`), the last assistant message
 * that uses tools must start with its reasoning block: Bedrock answers Anthropic's own refusal.
 */
function checkThinkingTurn(body: Record<string, unknown>): AwsError | undefined {
  const fields = isObject(body.additionalModelRequestFields) ? body.additionalModelRequestFields : {};
  if (!isObject(fields.thinking) || fields.thinking.type !== 'enabled' || !Array.isArray(body.messages)) return undefined;
  const index = body.messages.findLastIndex((m) => isObject(m) && m.role === 'assistant');
  const message = body.messages[index];
  const blocks = isObject(message) && Array.isArray(message.content) ? (message.content as unknown[]).filter(isObject) : [];
  if (!blocks.some((b) => b.toolUse !== undefined) || blocks[0]?.reasoningContent !== undefined) return undefined;
  return invalid(
    `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${blocks[0]?.text !== undefined ? 'text' : 'tool_use'}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`,
  );
}

/** Checks a Converse / ConverseStream body: undefined when Bedrock would take it. */
export function checkConverse(body: Record<string, unknown>, limits: ConverseLimits): AwsError | undefined {
  const { error, usesTools } = checkMessages(body.messages, limits);
  if (error) return error;
  const thinking = checkThinkingTurn(body);
  if (thinking) return thinking;
  if (body.system !== undefined && (!Array.isArray(body.system) || body.system.some((b) => !isObject(b) || !oneMember(b) || (b.text !== undefined && typeof b.text !== 'string')))) {
    return invalid('The system field must be a list of SystemContentBlock objects.');
  }
  if (body.toolConfig !== undefined) {
    const toolError = checkToolConfig(body.toolConfig);
    if (toolError) return toolError;
  } else if (usesTools) {
    return invalid('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  }
  if (body.additionalModelRequestFields !== undefined && !isObject(body.additionalModelRequestFields)) return invalid('The additionalModelRequestFields field must be a JSON object.');
  return checkInference(body.inferenceConfig) ?? guardrailOf(body.guardrailConfig, limits.guardrails).error;
}
