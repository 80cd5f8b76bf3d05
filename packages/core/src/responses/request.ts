import type { z } from 'zod';
import type { CompletionSettings, PlanRequest } from '../completions/types.js';
import type { CompletionMessage } from '../schemas/completions.js';
import type { ResponseResource } from '../schemas/response-objects.js';
import type { CreateResponseRequest } from '../schemas/responses.js';

type Body = z.output<typeof CreateResponseRequest>;

/** The answer's format of `text.format`, in the chat completion's terms (checked the same way). */
function responseFormat(format: NonNullable<Body['text']>['format']): CompletionSettings['response_format'] {
  if (format?.type !== 'json_schema') return format ?? undefined;
  const { name, description, schema, strict } = format;
  return { type: 'json_schema', json_schema: { name, schema, ...(description ? { description } : {}), ...(strict !== undefined && strict !== null ? { strict } : {}) } };
}

/**
 * The request as the planner takes it: the chat completion's settings (functions as `tools`,
 * `tool_choice`, `text.format` as `response_format`, `max_output_tokens` as the most tokens)
 * and `messages`, the conversation so far as the caller's request gives it.
 */
export function planRequest(body: Body, messages: readonly CompletionMessage[]): PlanRequest {
  const choice = body.tool_choice;
  return {
    model: body.model,
    messages,
    ...(body.provider ? { provider: body.provider } : {}),
    ...(body.provider_options ? { provider_options: body.provider_options } : {}),
    ...(body.tools?.length
      ? {
          tools: body.tools.map((t) => ({
            type: 'function' as const,
            function: {
              name: t.name,
              ...(t.description ? { description: t.description } : {}),
              ...(t.parameters ? { parameters: t.parameters } : {}),
              ...(t.strict !== undefined && t.strict !== null ? { strict: t.strict } : {}),
            },
          })),
        }
      : {}),
    ...(choice
      ? {
          tool_choice: typeof choice !== 'object' ? choice : choice.type === 'allowed_tools' ? choice.mode : { type: 'function' as const, function: { name: choice.name } },
          ...(typeof choice === 'object' && choice.type === 'allowed_tools' ? { allowedTools: choice.tools } : {}),
        }
      : {}),
    parallel_tool_calls: body.parallel_tool_calls,
    temperature: body.temperature,
    top_p: body.top_p,
    presence_penalty: body.presence_penalty,
    frequency_penalty: body.frequency_penalty,
    response_format: responseFormat(body.text?.format),
    maxTokens: body.max_output_tokens,
  };
}

/**
 * The response resource as it starts (`status` as given, no output yet): every member the
 * specification requires, the request's settings echoed (their defaults where it gave none).
 */
export function initialResource(
  body: Body,
  at: { id: string; createdAt: number; model: string; status: 'queued' | 'in_progress'; chatId: string | null; sources: ResponseResource['sources'] },
): ResponseResource {
  const format = body.text?.format;
  return {
    id: at.id,
    object: 'response',
    created_at: at.createdAt,
    completed_at: null,
    status: at.status,
    incomplete_details: null,
    model: at.model,
    previous_response_id: body.previous_response_id ?? null,
    instructions: body.instructions ?? null,
    output: [],
    error: null,
    tools: (body.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null })),
    tool_choice: body.tool_choice ?? 'auto',
    truncation: body.truncation ?? 'auto',
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    text: {
      format:
        format?.type === 'json_schema'
          ? { type: 'json_schema', name: format.name, description: format.description ?? null, schema: format.schema, strict: format.strict ?? false }
          : (format ?? { type: 'text' }),
    },
    top_p: body.top_p ?? 1,
    presence_penalty: body.presence_penalty ?? 0,
    frequency_penalty: body.frequency_penalty ?? 0,
    top_logprobs: 0,
    temperature: body.temperature ?? 1,
    reasoning: { effort: null, summary: body.reasoning?.summary ?? null },
    usage: null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    store: body.store !== false,
    background: body.background === true,
    service_tier: 'default',
    metadata: body.metadata ?? {},
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    sources: [...at.sources],
    chatId: at.chatId,
  };
}
