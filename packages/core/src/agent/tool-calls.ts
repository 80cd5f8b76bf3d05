import { PlatformError } from '../errors.js';
import { jsonExceedsNesting, nestingError } from '../nesting.js';
import type { ByteLimit } from '../net/upstream-limits.js';
import { utf8Bytes } from '../net/upstream-limits.js';
import type { ToolProgress } from '../tools/progress.js';
import type { ChatMessage, ToolCall } from './chat-model.js';
import type { AgentEvent } from './events.js';
import { type DecidedCall, deniedResult, type ElicitationAnswer, type ElicitationRequest, type QuestionAsker } from './questions.js';
import type { AgentTool, ToolRunContext } from './tools.js';

/**
 * The model's arguments text, parsed. Arguments nested deeper than `MAX_NESTING_DEPTH` are
 * refused here (the model gets the error), before any tool's code recurses into them.
 */
function parseArguments(text: string): unknown {
  if (!text.trim()) return {};
  if (jsonExceedsNesting(text)) throw nestingError('arguments');
  return JSON.parse(text);
}

export interface CallContext {
  readonly tools: ReadonlyMap<string, AgentTool>;
  readonly limit: ByteLimit;
  readonly signal?: AbortSignal | undefined;
  readonly questions?: QuestionAsker | undefined;
  /** The turn's model, for a tool that asks for a completion (MCP sampling). */
  readonly sample?: ToolRunContext['sample'];
}

/**
 * Runs one of the agent's tool calls: yields `tool_call`, any `elicitation` the tool asks the
 * person while it runs (its answer goes back to the tool) and `tool_progress` it reports, then
 * `tool_result`; returns the tool
 * message for the model. A failure (no such tool, bad arguments, a result over the limit, the
 * tool's error) is the tool's result, marked as an error; an abort is thrown.
 */
export async function* runToolCall(call: ToolCall, context: CallContext, decided?: DecidedCall): AsyncGenerator<AgentEvent, ChatMessage> {
  yield { type: 'tool_call', call };
  if (decided?.denied !== undefined) {
    const content = deniedResult(decided.denied || undefined);
    yield { type: 'tool_result', callId: call.id, name: call.name, content, isError: true };
    return { role: 'tool', toolCallId: call.id, content };
  }
  const tool = context.tools.get(call.name);
  const asked: AgentEvent[] = [];
  let wake = () => {};
  const questions = context.questions;
  const elicit = questions
    ? async (request: ElicitationRequest): Promise<ElicitationAnswer> => {
        const { question, answer } = await questions.ask(call, request, context.signal);
        asked.push({ type: 'elicitation', question });
        wake();
        return answer;
      }
    : undefined;
  let settled = false;
  const onProgress = (progress: ToolProgress) => {
    if (settled) return;
    asked.push({ type: 'tool_progress', callId: call.id, name: call.name, progress });
    wake();
  };
  const running = (async () => {
    if (!tool) throw new PlatformError('not_found', `There is no tool named ${call.name}`);
    return tool.run(parseArguments(call.arguments), {
      ...(context.signal ? { signal: context.signal } : {}),
      ...(context.sample ? { sample: context.sample } : {}),
      ...(elicit ? { elicit } : {}),
      onProgress,
    });
  })().finally(() => {
    settled = true;
    wake();
  });
  // The tool's questions (it waits for their answers) and progress are yielded while it runs.
  while (!settled) {
    await new Promise<void>((resolve) => {
      wake = resolve;
      if (settled || asked.length > 0) resolve();
    });
    while (asked.length > 0) yield asked.shift() as AgentEvent;
  }
  let content: string;
  let isError = false;
  try {
    content = await running;
    if (utf8Bytes(content) > context.limit.bytes) {
      throw new PlatformError('payload_too_large', `the result of ${call.name} is larger than ${context.limit.bytes} bytes, the limit set by ${context.limit.setting}`);
    }
  } catch (error) {
    context.signal?.throwIfAborted();
    isError = true;
    content = `Error: ${error instanceof Error ? error.message : String(error)}`;
  }
  yield { type: 'tool_result', callId: call.id, name: call.name, content, isError };
  return { role: 'tool', toolCallId: call.id, content };
}
