import { type ApiError, invalid, isObject } from '../openai-chat-server.js';

/**
 * The request checks of OpenAI's `POST /v1/responses` (openai/openai-openapi's
 * `CreateResponse`, as the `openai` package's `ResponseCreateParams` types it), worded as the
 * API answers: unknown parameters, the model, the input items and their roles and content part
 * types, function call outputs without their call, items referenced when nothing is stored,
 * tools in the Responses form (`{ type: 'function', name, parameters }`, not Chat Completions'
 * nested `function`), `tool_choice`, `text.format`, `reasoning` on a model without it, and the
 * numeric ranges.
 */

const PARAMETERS = new Set([
  'background',
  'context_management',
  'conversation',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
]);

const missing = (param: string) => invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
const badValue = (param: string, value: unknown, allowed: readonly string[]) =>
  invalid(`Invalid value: '${String(value)}'. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, param, 'invalid_value');

/** Models that reason (and take `reasoning`): o-series and gpt-5. */
export const isReasoningModel = (model: string) => /^(o\d|gpt-5)/.test(model);

const PART_TYPES: Record<string, readonly string[]> = {
  user: ['input_text', 'input_image', 'input_file'],
  system: ['input_text'],
  developer: ['input_text'],
  assistant: ['output_text', 'refusal'],
};

function checkInput(input: unknown, store: boolean, previous: boolean): ApiError | undefined {
  if (input === undefined || typeof input === 'string') return undefined;
  if (!Array.isArray(input)) return invalid("Invalid type for 'input': expected one of a string or an array of input items.", 'input', 'invalid_type');
  const calls = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const at = `input[${i}]`;
    if (!isObject(item)) return invalid(`Invalid type for '${at}': expected an input item.`, at, 'invalid_type');
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (typeof role !== 'string' || !(role in PART_TYPES)) return badValue(`${at}.role`, role, ['assistant', 'system', 'developer', 'user']);
      if (typeof item.content === 'string') continue;
      if (!Array.isArray(item.content)) return missing(`${at}.content`);
      for (let j = 0; j < item.content.length; j++) {
        const part: unknown = item.content[j];
        const allowed = PART_TYPES[role] as readonly string[];
        if (!isObject(part) || !allowed.includes(String(part.type))) return badValue(`${at}.content[${j}].type`, isObject(part) ? part.type : part, allowed);
        if (part.type === 'input_image' && typeof part.image_url !== 'string' && typeof part.file_id !== 'string') return missing(`${at}.content[${j}].image_url`);
        if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text !== 'string') return missing(`${at}.content[${j}].text`);
      }
    } else if (type === 'function_call') {
      for (const key of ['call_id', 'name', 'arguments']) if (typeof item[key] !== 'string') return missing(`${at}.${key}`);
      calls.add(item.call_id as string);
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') return missing(`${at}.call_id`);
      if (item.output === undefined) return missing(`${at}.output`);
      if (!calls.has(item.call_id) && !previous) return invalid(`No tool call found for function call output with call_id ${item.call_id}.`, 'input');
    } else if (type === 'item_reference') {
      if (!store) {
        return {
          status: 404,
          message: `Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
          type: 'invalid_request_error',
          param: 'input',
          code: null,
        };
      }
    } else if (type !== 'reasoning') {
      return badValue(`${at}.type`, type, ['message', 'function_call', 'function_call_output', 'item_reference', 'reasoning']);
    }
  }
  return undefined;
}

function checkTools(body: Record<string, unknown>): ApiError | undefined {
  const tools = body.tools;
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return invalid("Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
    for (let i = 0; i < tools.length; i++) {
      const tool: unknown = tools[i];
      if (!isObject(tool) || tool.type !== 'function') return badValue(`tools[${i}].type`, isObject(tool) ? tool.type : tool, ['function', 'file_search', 'web_search', 'mcp', 'custom']);
      if (typeof tool.name !== 'string') return missing(`tools[${i}].name`);
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name))
        return invalid(`Invalid 'tools[${i}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `tools[${i}].name`, 'invalid_value');
      if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters))
        return invalid(`Invalid type for 'tools[${i}].parameters': expected an object.`, `tools[${i}].parameters`, 'invalid_type');
    }
  }
  const choice = body.tool_choice;
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === 'string') return ['none', 'auto', 'required'].includes(choice) ? undefined : badValue('tool_choice', choice, ['none', 'auto', 'required']);
  if (!isObject(choice) || choice.type !== 'function' || typeof choice.name !== 'string') return invalid("Invalid value for 'tool_choice'.", 'tool_choice', 'invalid_value');
  const names = Array.isArray(tools) ? tools.map((t) => (isObject(t) ? t.name : undefined)) : [];
  return names.includes(choice.name) ? undefined : invalid(`Tool choice '${choice.name}' not found in 'tools' parameter.`, 'tool_choice');
}

function checkNumbers(body: Record<string, unknown>): ApiError | undefined {
  const ranges: [string, number, number, boolean][] = [
    ['temperature', 0, 2, false],
    ['top_p', 0, 1, false],
    ['max_output_tokens', 16, Number.MAX_SAFE_INTEGER, true],
  ];
  for (const [name, min, max, integer] of ranges) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    const kind = integer ? 'integer' : 'decimal';
    if (typeof value !== 'number' || (integer && !Number.isInteger(value))) return invalid(`Invalid type for '${name}': expected ${integer ? 'an integer' : 'a number'}.`, name, 'invalid_type');
    if (value < min) return invalid(`Invalid '${name}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`, name, `${kind}_below_min_value`);
    if (value > max) return invalid(`Invalid '${name}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`, name, `${kind}_above_max_value`);
  }
  return undefined;
}

function checkText(text: unknown): ApiError | undefined {
  if (text === undefined) return undefined;
  const format = isObject(text) ? text.format : undefined;
  if (format === undefined) return undefined;
  if (!isObject(format) || !['text', 'json_object', 'json_schema'].includes(String(format.type)))
    return badValue('text.format.type', isObject(format) ? format.type : format, ['text', 'json_object', 'json_schema']);
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string') return missing('text.format.name');
    if (!isObject(format.schema)) return missing('text.format.schema');
  }
  return undefined;
}

/** The first problem of a `POST /v1/responses` body, as the API words it; undefined when it is well formed. */
export function checkResponsesBody(body: Record<string, unknown>): ApiError | undefined {
  for (const key of Object.keys(body)) if (!PARAMETERS.has(key)) return invalid(`Unknown parameter: '${key}'.`, key, 'unknown_parameter');
  if (typeof body.model !== 'string' || body.model === '') return missing('model');
  if (body.store !== undefined && body.store !== null && typeof body.store !== 'boolean') return invalid("Invalid type for 'store': expected a boolean.", 'store', 'invalid_type');
  if (isObject(body.reasoning) && !isReasoningModel(body.model)) {
    const field = Object.keys(body.reasoning)[0] ?? 'effort';
    return invalid(`Unsupported parameter: 'reasoning.${field}' is not supported with this model.`, `reasoning.${field}`, 'unsupported_parameter');
  }
  return checkInput(body.input, body.store !== false, typeof body.previous_response_id === 'string') ?? checkTools(body) ?? checkNumbers(body) ?? checkText(body.text);
}
