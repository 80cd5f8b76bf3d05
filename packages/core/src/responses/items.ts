import type { ToolCall, Usage } from '../agent/chat-model.js';
import { formFields } from '../agent/form-fields.js';
import type { AgentEvent, Source } from '../agent/loop.js';
import type { PendingApproval, PendingQuestion } from '../agent/questions.js';
import { MCP_TOOL_PREFIX } from '../agent/tools.js';
import { type ErrorCode, isPlatformError, PlatformError } from '../errors.js';
import { randomString } from '../ids.js';
import type { OutputItem, ResponseResource, ResponseStreamEvent } from '../schemas/response-objects.js';

type Message = Extract<OutputItem, { type: 'message' }>;
type Reasoning = Extract<OutputItem, { type: 'reasoning' }>;
type ServerToolCall = Extract<OutputItem, { type: 'mcp_call' | 'agent_platform:tool_call' }>;
type ApprovalRequest = Extract<OutputItem, { type: 'mcp_approval_request' }>;
type ElicitationRequest = Extract<OutputItem, { type: 'agent_platform:elicitation_request' }>;
type Annotation = Message['content'][number]['annotations'][number];

/** The event of a failure: our error `code` (the server maps it to the wire's error type), the message, the field. */
export interface ResponseErrorEvent {
  readonly type: 'error';
  readonly sequence_number: number;
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly param: string | null; readonly details?: Record<string, unknown> };
}

/** The failure an `error` event of a response's stream tells, as the error it was (undefined for any other event). */
export function failureOf(event: ResponseStreamEvent): PlatformError | undefined {
  if (event.type !== 'error') return undefined;
  const { code, message, param, details } = (event as unknown as ResponseErrorEvent).error;
  return new PlatformError(code, message, { ...(details ? { details } : {}), ...(param ? { issues: [{ path: param.split('.'), code: 'custom', message }] } : {}) });
}

const itemId = (prefix: string) => `${prefix}_${randomString(24)}`;

const usageOut = (u: Usage): NonNullable<ResponseResource['usage']> => ({
  input_tokens: u.promptTokens,
  input_tokens_details: { cached_tokens: u.cachedPromptTokens ?? 0 },
  output_tokens: u.completionTokens,
  output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
  total_tokens: u.totalTokens,
});

/**
 * The knowledge sources cited in `text` as `[n]`: one `file_citation` per citation, at the
 * character where it ends (a citation of no source given is left alone).
 */
export function citations(text: string, sources: readonly Source[]): Annotation[] {
  const found: Annotation[] = [];
  for (const match of text.matchAll(/\[(\d{1,3})\]/g)) {
    const source = sources[Number(match[1]) - 1];
    if (source)
      found.push({ type: 'file_citation', file_id: source.documentId, filename: source.fileName, index: match.index + match[0].length, chunk_id: source.chunkId, source_index: source.index });
  }
  return found;
}

/** An MCP server's tool as the model is offered it (`mcp__<server>__<tool>`): its server and name; undefined for any other tool. */
function mcpTool(name: string): { server_label: string; name: string } | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const cut = rest.indexOf('__');
  return { server_label: cut > 0 ? rest.slice(0, cut) : rest, name: cut > 0 ? rest.slice(cut + 2) : rest };
}

/** A call of a server-run tool as its output item: `mcp_call` for an MCP server's tool, else the extension item. */
function serverCallItem(call: ToolCall): ServerToolCall {
  const base = { arguments: call.arguments, output: null, error: null, status: 'in_progress' as const };
  const mcp = mcpTool(call.name);
  if (mcp) return { type: 'mcp_call', id: itemId('mcp'), ...mcp, call_id: call.id, ...base };
  return { type: 'agent_platform:tool_call', id: itemId('tc'), call_id: call.id, name: call.name, ...base };
}

/** A call waiting for approval as OpenAI's `mcp_approval_request` (its id is the approval's); a project tool's server is `agent_platform`. */
function approvalItem(approval: PendingApproval): ApprovalRequest {
  const tool = mcpTool(approval.tool) ?? { server_label: 'agent_platform', name: approval.tool };
  return {
    type: 'mcp_approval_request',
    id: approval.id,
    ...tool,
    arguments: approval.arguments,
    call_id: approval.callId,
    expires_at: Math.floor(Date.parse(approval.expiresAt) / 1000),
  };
}

/** An MCP server's question during a tool call as the extension item `agent_platform:elicitation_request` (its id is the question's). */
function questionItem(question: PendingQuestion): ElicitationRequest {
  const tool = mcpTool(question.tool) ?? { server_label: 'agent_platform', name: question.tool };
  return {
    type: 'agent_platform:elicitation_request',
    id: question.id,
    ...tool,
    call_id: question.callId,
    message: question.message,
    fields: formFields(question.schema),
    schema: question.schema,
    expires_at: Math.floor(Date.parse(question.expiresAt) / 1000),
  };
}

/**
 * The one mapping of an agent run to the Open Responses stream: the run's events (`AgentEvent`)
 * become output items and the specification's semantic events, in order, each with its
 * `sequence_number`; `response` is the resource they build, updated in place (its `output`,
 * `status`, `usage`, ...), so whoever holds it reads the response as it stands.
 *
 * - `response.created` and `response.in_progress` first;
 * - text: a `message` item (`output_item.added`, `content_part.added`, `output_text.delta`...,
 *   the sources it cites as `output_text.annotation.added`, `output_text.done`,
 *   `content_part.done`, `output_item.done`);
 * - the model's reasoning: a `reasoning` item with one `reasoning_text` part, streamed the same way;
 * - the agent's own tools and MCP tools, which the service runs: an item added when the call
 *   starts (`in_progress`) and done with its output (`completed`, or `failed` with `error`);
 * - the client's functions: `function_call` items (added, `function_call_arguments.delta` and
 *   `.done`, done), for the client to run;
 * - an MCP server's question during a tool call (`elicitation`): an
 *   `agent_platform:elicitation_request` item (added, done); the tool waits for the answer;
 * - calls that wait for a person's approval (`approval_required`): `mcp_approval_request` items
 *   (added, done), the response's last output; the response completes;
 * - the end: `response.completed`, `response.incomplete` (the model ran out of
 *   `max_output_tokens`, or its provider's filter stopped it), or on a failure an `error` event
 *   then `response.failed`; a run stopped by `cancelled()` ends `cancelled`, failed the same way.
 */
export async function* responseEvents(
  response: ResponseResource,
  events: AsyncIterable<AgentEvent>,
  options: { readonly sources: readonly Source[]; readonly now: () => number; readonly cancelled: () => boolean },
): AsyncGenerator<ResponseStreamEvent> {
  let seq = 0;
  const event = <T extends Record<string, unknown>>(type: string, body: T) => ({ type, sequence_number: seq++, ...body });
  const snapshot = () => structuredClone(response);
  const output = response.output;
  let message: Message | undefined;
  let reasoning: Reasoning | undefined;
  const running = new Map<string, { item: ServerToolCall; index: number }>();

  /** Closes the open message or reasoning item: its text done, its part done, the item done. */
  function* close(status: 'completed' | 'incomplete' = 'completed'): Generator<ResponseStreamEvent> {
    if (message) {
      const index = output.indexOf(message);
      const part = message.content[0] as Message['content'][number];
      const at = { item_id: message.id, output_index: index, content_index: 0 };
      const annotations = citations(part.text, options.sources);
      for (const [i, annotation] of annotations.entries()) {
        part.annotations.push(annotation);
        yield event('response.output_text.annotation.added', { ...at, annotation_index: i, annotation });
      }
      yield event('response.output_text.done', { ...at, text: part.text, logprobs: [] });
      yield event('response.content_part.done', { ...at, part: structuredClone(part) });
      message.status = status;
      yield event('response.output_item.done', { output_index: index, item: structuredClone(message) });
      message = undefined;
    }
    if (reasoning) {
      const index = output.indexOf(reasoning);
      const part = reasoning.content[0] as Reasoning['content'][number];
      const at = { item_id: reasoning.id, output_index: index, content_index: 0 };
      yield event('response.reasoning_text.done', { ...at, text: part.text });
      yield event('response.content_part.done', { ...at, part: { ...part } });
      reasoning.status = 'completed';
      yield event('response.output_item.done', { output_index: index, item: structuredClone(reasoning) });
      reasoning = undefined;
    }
  }

  yield event('response.created', { response: snapshot() });
  yield event('response.in_progress', { response: snapshot() });
  try {
    for await (const e of events) {
      if (e.type === 'text' && e.delta) {
        if (reasoning) yield* close();
        if (!message) {
          message = { type: 'message', id: itemId('msg'), status: 'in_progress', role: 'assistant', content: [] };
          output.push(message);
          const index = output.length - 1;
          yield event('response.output_item.added', { output_index: index, item: structuredClone(message) });
          const part = { type: 'output_text' as const, text: '', annotations: [], logprobs: [] };
          message.content.push(part);
          yield event('response.content_part.added', { item_id: message.id, output_index: index, content_index: 0, part: { ...part, annotations: [], logprobs: [] } });
        }
        (message.content[0] as Message['content'][number]).text += e.delta;
        yield event('response.output_text.delta', { item_id: message.id, output_index: output.length - 1, content_index: 0, delta: e.delta, logprobs: [] });
      } else if (e.type === 'reasoning' && e.delta) {
        if (message) yield* close();
        if (!reasoning) {
          reasoning = { type: 'reasoning', id: itemId('rs'), status: 'in_progress', summary: [], content: [] };
          output.push(reasoning);
          const index = output.length - 1;
          yield event('response.output_item.added', { output_index: index, item: structuredClone(reasoning) });
          reasoning.content.push({ type: 'reasoning_text', text: '' });
          yield event('response.content_part.added', { item_id: reasoning.id, output_index: index, content_index: 0, part: { type: 'reasoning_text', text: '' } });
        }
        (reasoning.content[0] as Reasoning['content'][number]).text += e.delta;
        yield event('response.reasoning_text.delta', { item_id: reasoning.id, output_index: output.length - 1, content_index: 0, delta: e.delta });
      } else if (e.type === 'tool_call') {
        yield* close();
        const item = serverCallItem(e.call);
        output.push(item);
        running.set(e.call.id, { item, index: output.length - 1 });
        yield event('response.output_item.added', { output_index: output.length - 1, item: structuredClone(item) });
      } else if (e.type === 'tool_result') {
        const run = running.get(e.callId);
        if (!run) continue;
        running.delete(e.callId);
        Object.assign(run.item, e.isError ? { status: 'failed', error: e.content } : { status: 'completed', output: e.content });
        yield event('response.output_item.done', { output_index: run.index, item: structuredClone(run.item) });
      } else if (e.type === 'elicitation') {
        // A running tool's server asks the person: the item says so, the tool waits for the answer.
        yield* close();
        const item = questionItem(e.question);
        output.push(item);
        yield event('response.output_item.added', { output_index: output.length - 1, item: structuredClone(item) });
        yield event('response.output_item.done', { output_index: output.length - 1, item: structuredClone(item) });
      } else if (e.type === 'approval_required') {
        yield* close();
        for (const approval of e.approvals) {
          const item = approvalItem(approval);
          output.push(item);
          yield event('response.output_item.added', { output_index: output.length - 1, item: { ...item } });
          yield event('response.output_item.done', { output_index: output.length - 1, item: { ...item } });
        }
      } else if (e.type === 'finish') {
        const cut = e.reason === 'length' || e.reason === 'content_filter';
        yield* close(cut ? 'incomplete' : 'completed');
        for (const call of e.toolCalls ?? []) {
          const item = { type: 'function_call' as const, id: itemId('fc'), call_id: call.id, name: call.name, arguments: '', status: 'in_progress' as const };
          output.push(item);
          const at = { item_id: item.id, output_index: output.length - 1 };
          yield event('response.output_item.added', { output_index: at.output_index, item: { ...item } });
          item.arguments = call.arguments;
          yield event('response.function_call_arguments.delta', { ...at, delta: call.arguments });
          yield event('response.function_call_arguments.done', { ...at, name: call.name, arguments: call.arguments });
          Object.assign(item, { status: 'completed' });
          yield event('response.output_item.done', { output_index: at.output_index, item: { ...item } });
        }
        response.usage = usageOut(e.usage);
        response.completed_at = options.now();
        if (cut) {
          response.status = 'incomplete';
          response.incomplete_details = { reason: e.reason === 'length' ? 'max_output_tokens' : 'content_filter' };
          yield event('response.incomplete', { response: snapshot() });
        } else {
          response.status = 'completed';
          yield event('response.completed', { response: snapshot() });
        }
        return;
      }
    }
    throw new PlatformError('upstream_error', 'The model stream ended without an answer');
  } catch (error) {
    const cancelled = options.cancelled();
    const failure = cancelled ? new PlatformError('aborted', 'The response was cancelled') : isPlatformError(error) ? error : new PlatformError('internal', 'Internal server error', { cause: error });
    yield* close('incomplete');
    response.status = cancelled ? 'cancelled' : 'failed';
    response.error = { code: cancelled ? 'cancelled' : failure.code, message: failure.message };
    const param = failure.issues?.[0]?.path.join('.') || null;
    const failed: ResponseErrorEvent = {
      type: 'error',
      sequence_number: seq++,
      error: { code: failure.code, message: failure.message, param, ...(failure.details ? { details: failure.details } : {}) },
    };
    yield failed as unknown as ResponseStreamEvent;
    yield event('response.failed', { response: snapshot() });
  }
}
