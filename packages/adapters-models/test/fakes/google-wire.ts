import { createHmac } from 'node:crypto';

/**
 * The Gemini API's documented request checks and error bodies, for the loopback server in
 * `google-server.ts`. Errors are Google's `{ error: { code, message, status, details? } }`
 * with the HTTP status the API answers; the messages are the API's own where it is known
 * (the too-long prompt, a bad or missing key, an unknown model, the quota), else Google's
 * field-path style (`* GenerateContentRequest.contents: ...`).
 */

export interface GoogleApiError {
  readonly code: number;
  readonly message: string;
  readonly status: string;
  readonly details?: readonly Record<string, unknown>[];
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const invalidArgument = (message: string, details?: readonly Record<string, unknown>[]): GoogleApiError => ({
  code: 400,
  message,
  status: 'INVALID_ARGUMENT',
  ...(details ? { details } : {}),
});

/** A bad key: Google answers 400, not 401, with `API_KEY_INVALID` in an ErrorInfo detail. */
export const apiKeyInvalid = (): GoogleApiError =>
  invalidArgument('API key not valid. Please pass a valid API key.', [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
  ]);

/** No key at all: 403. */
export const unregisteredCaller = (): GoogleApiError => ({
  code: 403,
  message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
  status: 'PERMISSION_DENIED',
});

export const modelNotFound = (model: string, method: string): GoogleApiError => ({
  code: 404,
  message: `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
  status: 'NOT_FOUND',
});

export const tooLong = (count: number, limit: number): GoogleApiError => invalidArgument(`The input token count (${count}) exceeds the maximum number of tokens allowed (${limit}).`);

/** A quota refusal, with the retry hint Google gives in a RetryInfo detail (no Retry-After header). */
export const quotaExhausted = (retryDelay: string, message?: string): GoogleApiError => ({
  code: 429,
  message: message ?? 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
  status: 'RESOURCE_EXHAUSTED',
  details: [
    {
      '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
      violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier' }],
    },
    { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
  ],
});

/** The body Google answers for a scripted HTTP status. */
export function scriptedError(status: number, message?: string, retryDelay = '1s'): GoogleApiError {
  if (status === 429) return quotaExhausted(retryDelay, message);
  const known: Record<number, [string, string]> = {
    400: ['INVALID_ARGUMENT', 'Request contains an invalid argument.'],
    401: ['UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'],
    403: ['PERMISSION_DENIED', 'The caller does not have permission'],
    404: ['NOT_FOUND', 'Requested entity was not found.'],
    409: ['ABORTED', 'The operation was aborted.'],
    499: ['CANCELLED', 'The operation was cancelled.'],
    500: ['INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'],
    503: ['UNAVAILABLE', 'The model is overloaded. Please try again later.'],
    504: ['DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'],
  };
  const [name, text] = known[status] ?? [status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT', `HTTP ${status}`];
  return { code: status, message: message ?? text, status: name };
}

const REQUEST_FIELDS = new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'safetySettings', 'generationConfig', 'cachedContent', 'serviceTier']);
const GENERATION_FIELDS = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'enableEnhancedCivicAnswers',
  'speechConfig',
  'thinkingConfig',
  'imageConfig',
  'mediaResolution',
]);
const THINKING_FIELDS = new Set(['includeThoughts', 'thinkingBudget', 'thinkingLevel']);
const PART_DATA = ['text', 'inlineData', 'functionCall', 'functionResponse', 'fileData', 'executableCode', 'codeExecutionResult'];
const HARM_CATEGORIES = [
  'HARM_CATEGORY_UNSPECIFIED',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_CIVIC_INTEGRITY',
];
const THRESHOLDS = ['HARM_BLOCK_THRESHOLD_UNSPECIFIED', 'BLOCK_LOW_AND_ABOVE', 'BLOCK_MEDIUM_AND_ABOVE', 'BLOCK_ONLY_HIGH', 'BLOCK_NONE', 'OFF'];
const MIME_TYPES = ['text/plain', 'application/json', 'text/x.enum'];
const MODES = ['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED'];
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const unknownName = (name: string, where = '') => invalidArgument(`Invalid JSON payload received. Unknown name "${name}"${where ? ` at '${where}'` : ''}: Cannot find field.`);
const field = (path: string, message: string) => invalidArgument(`* GenerateContentRequest.${path}: ${message}\n`);

function checkNumber(value: unknown, path: string, min: number, max: number, integer = false): GoogleApiError | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || (integer && !Number.isInteger(value))) return invalidArgument(`Invalid value at '${path}' (${integer ? 'TYPE_INT32' : 'TYPE_FLOAT'}), ${JSON.stringify(value)}`);
  if (value < min || value > max) return field(path, `must be within [${min}, ${max}]`);
  return undefined;
}

function checkPart(part: unknown, path: string): GoogleApiError | undefined {
  if (!isObject(part)) return invalidArgument(`Invalid value at '${path}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part), ${JSON.stringify(part)}`);
  const data = PART_DATA.filter((name) => part[name] !== undefined);
  if (data.length !== 1) return field(`${path}.data`, `required oneof field 'data' must have one initialized field`);
  if (part.text !== undefined && typeof part.text !== 'string') return invalidArgument(`Invalid value at '${path}.text' (TYPE_STRING), ${JSON.stringify(part.text)}`);
  if (part.inlineData !== undefined) {
    const inline = part.inlineData;
    if (!isObject(inline) || typeof inline.mimeType !== 'string' || inline.mimeType === '') return field(`${path}.inline_data.mime_type`, 'mime_type must be set');
    if (typeof inline.data !== 'string' || !BASE64.test(inline.data)) return invalidArgument(`Invalid value at '${path}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`);
    if (inline.data === '') return field(`${path}.inline_data.data`, 'data must not be empty');
  }
  if (part.functionCall !== undefined && (!isObject(part.functionCall) || typeof part.functionCall.name !== 'string')) return field(`${path}.function_call.name`, 'Name cannot be empty.');
  if (part.functionResponse !== undefined) {
    const response = part.functionResponse;
    if (!isObject(response) || typeof response.name !== 'string') return field(`${path}.function_response.name`, 'Name cannot be empty.');
    if (!isObject(response.response)) return field(`${path}.function_response.response`, 'response must be a JSON object');
  }
  return undefined;
}

/**
 * The thought signature of a function call: Gemini 3 signs the first function call of each answer
 * (an opaque, encrypted value); here an HMAC of the call's name and arguments under the fake's
 * own key stands for it, so a signature that comes back with another call, or altered, is told apart.
 */
export const signFunctionCall = (name: string, args: unknown): string =>
  createHmac('sha256', 'the-fake-gemini-signing-key')
    .update(`${name}\n${JSON.stringify(args ?? {})}`)
    .digest('base64');

/** Models named like Gemini 3 (`gemini-3-pro-preview`, `gemini-3.1-flash`, ...): they sign their function calls and check the signatures of the current turn. */
export const isGemini3 = (model: string): boolean => /^gemini-3/.test(model);

/** The values Google documents for a function call that has no signature of its own (history from another model, or one written by hand). */
export const SKIP_SIGNATURES = ['skip_thought_signature_validator', 'context_engineering_is_the_way_to_go'];

/** Where the current turn starts: after the last user content with a part that is not a function response (its index, or 0). */
function currentTurnStart(contents: readonly unknown[]): number {
  const at = contents.findLastIndex((c) => isObject(c) && (c.role ?? 'user') === 'user' && Array.isArray(c.parts) && c.parts.some((p) => isObject(p) && p.functionResponse === undefined));
  return Math.max(at, 0);
}

/**
 * Gemini 3's rule for the current turn: the first function call of each model content carries the
 * signature it came with (or a documented skip value); a missing one and a wrong one are 400s.
 * Earlier turns are not checked, as Google documents.
 */
function checkSignature(call: Record<string, unknown>, index: number): GoogleApiError | undefined {
  const fn = call.functionCall as { name: string; args?: unknown };
  if (typeof call.thoughtSignature !== 'string') {
    return invalidArgument(
      `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${fn.name}\` , position ${index + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
    );
  }
  if (SKIP_SIGNATURES.includes(call.thoughtSignature) || call.thoughtSignature === signFunctionCall(fn.name, fn.args)) return undefined;
  return invalidArgument(`Corrupted thought signature. Function call \`default_api:${fn.name}\` , position ${index + 1}.`);
}

/** `contents`: roles, parts, and Gemini's ordering rules for function calls and their responses. */
function checkContents(contents: unknown, thoughtSignatures: boolean): GoogleApiError | undefined {
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) return field('contents', 'contents is not specified');
  if (!Array.isArray(contents)) return invalidArgument(`Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(contents)}`);
  let previous: { role: string; calls: number; responses: number } | undefined;
  const turn = currentTurnStart(contents);
  for (const [i, content] of contents.entries()) {
    if (!isObject(content)) return invalidArgument(`Invalid value at 'contents[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(content)}`);
    const role = content.role ?? 'user';
    if (role !== 'user' && role !== 'model') return invalidArgument('Please use a valid role: user, model.');
    if (!Array.isArray(content.parts) || content.parts.length === 0) return field(`contents[${i}].parts`, 'contents.parts must not be empty.');
    for (const [j, part] of content.parts.entries()) {
      const problem = checkPart(part, `contents[${i}].parts[${j}]`);
      if (problem) return problem;
    }
    const parts = content.parts as Record<string, unknown>[];
    const calls = parts.filter((p) => p.functionCall !== undefined);
    const responses = parts.filter((p) => p.functionResponse !== undefined).length;
    if (calls.length > 0) {
      if (role !== 'model') return invalidArgument('Please ensure that function call parts are only in model turns.');
      if (previous && previous.role !== 'user') return invalidArgument('Please ensure that function call turn comes immediately after a user turn or after a function response turn.');
      // Gemini 3 wants the first function call of each model content of the current turn signed (the SDKs send a skip value when they have none).
      const problem = thoughtSignatures && i > turn ? checkSignature(calls[0] as Record<string, unknown>, i) : undefined;
      if (problem) return problem;
    }
    if (previous && previous.calls > 0 && responses !== previous.calls) {
      return invalidArgument('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
    }
    if (responses > 0 && (!previous || previous.calls === 0)) {
      return invalidArgument('Please ensure that function response turn comes immediately after a function call turn.');
    }
    previous = { role, calls: calls.length, responses };
  }
  return undefined;
}

function checkTools(tools: unknown, toolConfig: unknown): GoogleApiError | undefined {
  const declared = new Set<string>();
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return invalidArgument(`Invalid value at 'tools' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tools)}`);
    for (const [i, tool] of tools.entries()) {
      if (!isObject(tool)) return invalidArgument(`Invalid value at 'tools[${i}]'`);
      for (const key of Object.keys(tool)) {
        if (!['functionDeclarations', 'googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'fileSearch', 'googleMaps', 'computerUse'].includes(key))
          return unknownName(key, `tools[${i}]`);
      }
      const declarations = tool.functionDeclarations ?? [];
      if (!Array.isArray(declarations)) return invalidArgument(`Invalid value at 'tools[${i}].function_declarations'`);
      for (const [j, declaration] of declarations.entries()) {
        const path = `tools[${i}].function_declarations[${j}]`;
        if (!isObject(declaration) || typeof declaration.name !== 'string' || !FUNCTION_NAME.test(declaration.name)) {
          return field(
            `${path}.name`,
            'Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.',
          );
        }
        if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
          return field(`${path}.parameters`, 'parameters and parameters_json_schema cannot both be set');
        }
        declared.add(declaration.name);
      }
    }
  }
  if (toolConfig === undefined) return undefined;
  if (!isObject(toolConfig)) return invalidArgument(`Invalid value at 'tool_config'`);
  const config = toolConfig.functionCallingConfig;
  if (config === undefined) return undefined;
  if (!isObject(config)) return invalidArgument(`Invalid value at 'tool_config.function_calling_config'`);
  if (config.mode !== undefined && !MODES.includes(String(config.mode))) {
    return invalidArgument(
      `Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "${String(config.mode)}"`,
    );
  }
  const allowed = config.allowedFunctionNames;
  if (allowed !== undefined) {
    if (config.mode !== 'ANY' && config.mode !== 'VALIDATED') {
      return field('tool_config.function_calling_config.allowed_function_names', 'allowed_function_names can only be set when the mode is ANY or VALIDATED.');
    }
    for (const name of Array.isArray(allowed) ? allowed : []) {
      if (!declared.has(String(name))) return field('tool_config.function_calling_config.allowed_function_names', `function name ${String(name)} is not declared in the tools.`);
    }
  }
  return undefined;
}

function checkGeneration(config: unknown): GoogleApiError | undefined {
  if (config === undefined) return undefined;
  if (!isObject(config)) return invalidArgument(`Invalid value at 'generation_config'`);
  for (const key of Object.keys(config)) if (!GENERATION_FIELDS.has(key)) return unknownName(key, 'generation_config');
  const numbers = [
    checkNumber(config.temperature, 'generation_config.temperature', 0, 2),
    checkNumber(config.topP, 'generation_config.top_p', 0, 1),
    checkNumber(config.topK, 'generation_config.top_k', 1, 1000, true),
    checkNumber(config.maxOutputTokens, 'generation_config.max_output_tokens', 1, 1_000_000, true),
    checkNumber(config.seed, 'generation_config.seed', -(2 ** 31), 2 ** 31 - 1, true),
    checkNumber(config.candidateCount, 'generation_config.candidate_count', 1, 8, true),
  ];
  const problem = numbers.find((p) => p !== undefined);
  if (problem) return problem;
  if (config.stopSequences !== undefined) {
    if (!Array.isArray(config.stopSequences) || config.stopSequences.some((s) => typeof s !== 'string')) return invalidArgument(`Invalid value at 'generation_config.stop_sequences'`);
    if (config.stopSequences.length > 5) return field('generation_config.stop_sequences', 'at most 5 stop sequences are supported');
  }
  if (config.responseMimeType !== undefined && !MIME_TYPES.includes(String(config.responseMimeType))) {
    return field('generation_config.response_mime_type', `allowed mimetypes are \`text/plain\`, \`application/json\`, \`text/x.enum\`.`);
  }
  const hasSchema = config.responseSchema !== undefined || config.responseJsonSchema !== undefined;
  if (config.responseSchema !== undefined && config.responseJsonSchema !== undefined) return field('generation_config.response_schema', 'response_schema and response_json_schema cannot both be set');
  if (hasSchema && config.responseMimeType !== 'application/json' && config.responseMimeType !== 'text/x.enum') {
    return field('generation_config.response_mime_type', 'When using response_schema or response_json_schema, response_mime_type must be set to application/json or text/x.enum.');
  }
  if (config.thinkingConfig !== undefined) {
    if (!isObject(config.thinkingConfig)) return invalidArgument(`Invalid value at 'generation_config.thinking_config'`);
    for (const key of Object.keys(config.thinkingConfig)) if (!THINKING_FIELDS.has(key)) return unknownName(key, 'generation_config.thinking_config');
    const budget = checkNumber(config.thinkingConfig.thinkingBudget, 'generation_config.thinking_config.thinking_budget', -1, 32_768, true);
    if (budget) return budget;
  }
  return undefined;
}

function checkSafety(settings: unknown): GoogleApiError | undefined {
  if (settings === undefined) return undefined;
  if (!Array.isArray(settings)) return invalidArgument(`Invalid value at 'safety_settings'`);
  const seen = new Set<string>();
  for (const [i, setting] of settings.entries()) {
    if (!isObject(setting)) return invalidArgument(`Invalid value at 'safety_settings[${i}]'`);
    if (!HARM_CATEGORIES.includes(String(setting.category))) {
      return invalidArgument(`Invalid value at 'safety_settings[${i}].category' (type.googleapis.com/google.ai.generativelanguage.v1beta.HarmCategory), "${String(setting.category)}"`);
    }
    if (!THRESHOLDS.includes(String(setting.threshold))) {
      return invalidArgument(
        `Invalid value at 'safety_settings[${i}].threshold' (type.googleapis.com/google.ai.generativelanguage.v1beta.SafetySetting.HarmBlockThreshold), "${String(setting.threshold)}"`,
      );
    }
    if (seen.has(String(setting.category))) return field('safety_settings', `Duplicate category: ${String(setting.category)}`);
    seen.add(String(setting.category));
  }
  return undefined;
}

/** The checks the API makes of a `GenerateContentRequest` body, in the order it reports them. */
export function checkRequest(body: Record<string, unknown>, model: string): GoogleApiError | undefined {
  for (const key of Object.keys(body)) if (!REQUEST_FIELDS.has(key)) return unknownName(key);
  const system = body.systemInstruction;
  if (system !== undefined && (!isObject(system) || !Array.isArray(system.parts) || system.parts.some((p) => !isObject(p) || typeof p.text !== 'string'))) {
    return field('system_instruction', 'system_instruction must have text parts');
  }
  return checkContents(body.contents, isGemini3(model)) ?? checkTools(body.tools, body.toolConfig) ?? checkGeneration(body.generationConfig) ?? checkSafety(body.safetySettings);
}
