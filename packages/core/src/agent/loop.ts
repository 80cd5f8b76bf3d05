import { PlatformError } from '../errors.js';
import { jsonExceedsNesting, nestingError } from '../nesting.js';
import type { SearchHit } from '../schemas/knowledge.js';
import type { ChatMessage, ChatModel, FinishReason, ToolCall, Usage } from './chat-model.js';
import type { AgentTool } from './tools.js';

/** A knowledge hit that went into the model's context, as the response reports it. */
export interface Source {
  /** Citation number in the context, from 1. */
  readonly index: number;
  readonly chunkId: string;
  readonly documentId: string;
  readonly fileName: string;
  readonly score: number;
  readonly content: string;
}

/** What an agent turn yields, in order. */
export type AgentEvent =
  | { readonly type: 'text'; readonly delta: string }
  | { readonly type: 'tool_call'; readonly call: ToolCall }
  | { readonly type: 'tool_result'; readonly callId: string; readonly name: string; readonly content: string; readonly isError: boolean }
  | { readonly type: 'finish'; readonly reason: FinishReason; readonly usage: Usage; readonly messages: readonly ChatMessage[] };

export interface AgentTurn {
  readonly model: ChatModel;
  /** The provider's model name. */
  readonly modelName: string;
  /** System context of the agent (instructions and knowledge), if any. */
  readonly system?: string;
  /** Earlier messages of the chat. */
  readonly history: readonly ChatMessage[];
  /** The messages of this request (after the history). */
  readonly input: readonly ChatMessage[];
  readonly tools: readonly AgentTool[];
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Model calls at most; the last one is offered no tools, so it answers. Default 8. */
  readonly stepLimit?: number;
  readonly signal?: AbortSignal;
}

const addUsage = (a: Usage, b: Usage | undefined): Usage =>
  b
    ? { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens, totalTokens: a.totalTokens + b.totalTokens }
    : a;

/** The system context with numbered knowledge excerpts, or undefined when there is nothing to say. */
export function systemContext(instructions: string | undefined, hits: readonly SearchHit[]): { system?: string; sources: Source[] } {
  const sources: Source[] = hits.map((h, i) => ({
    index: i + 1,
    chunkId: h.id,
    documentId: String(h.metadata.documentId ?? ''),
    fileName: String(h.metadata.fileName ?? ''),
    score: h.score,
    content: h.content,
  }));
  const parts: string[] = [];
  if (instructions?.trim()) parts.push(instructions.trim());
  if (sources.length > 0) {
    parts.push(
      [
        "Answer using the following excerpts from the project's documents when they are relevant, and cite them as [1], [2], ...",
        ...sources.map((s) => `[${s.index}] ${s.fileName}${hits[s.index - 1]?.metadata.section ? ` — ${hits[s.index - 1]?.metadata.section}` : ''}\n${s.content}`),
      ].join('\n\n'),
    );
  }
  return parts.length > 0 ? { system: parts.join('\n\n'), sources } : { sources };
}

/**
 * The model's arguments text, parsed. Arguments nested deeper than `MAX_NESTING_DEPTH` are
 * refused here (the model gets the error), before any tool's code recurses into them.
 */
function parseArguments(text: string): unknown {
  if (!text.trim()) return {};
  if (jsonExceedsNesting(text)) throw nestingError('arguments');
  return JSON.parse(text);
}

/**
 * One agent turn: model calls with the tools offered, the tools' results fed back, until the
 * model answers or the step limit is reached. Yields text as it streams. The `finish` event
 * carries the new messages of the turn (the assistant's tool calls, the tool results and the
 * final answer) for the caller to store.
 */
export async function* runAgentTurn(turn: AgentTurn): AsyncGenerator<AgentEvent> {
  const stepLimit = Math.max(1, turn.stepLimit ?? 8);
  const byName = new Map(turn.tools.map((t) => [t.definition.name, t]));
  const produced: ChatMessage[] = [];
  let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

  for (let step = 1; ; step++) {
    const offerTools = turn.tools.length > 0 && step < stepLimit;
    const messages: ChatMessage[] = [
      ...(turn.system ? [{ role: 'system' as const, content: turn.system }] : []),
      ...turn.history,
      ...turn.input,
      ...produced,
    ];
    let text = '';
    const calls: ToolCall[] = [];
    let reason: FinishReason = 'stop';
    for await (const event of turn.model.stream({
      model: turn.modelName,
      messages,
      ...(offerTools ? { tools: turn.tools.map((t) => t.definition) } : {}),
      ...(turn.temperature !== undefined ? { temperature: turn.temperature } : {}),
      ...(turn.maxTokens !== undefined ? { maxTokens: turn.maxTokens } : {}),
      ...(turn.signal ? { signal: turn.signal } : {}),
    })) {
      if (event.type === 'text') {
        text += event.delta;
        yield event;
      } else if (event.type === 'tool_call') {
        calls.push(event.call);
      } else {
        reason = event.reason;
        usage = addUsage(usage, event.usage);
      }
    }

    if (calls.length === 0 || !offerTools) {
      produced.push({ role: 'assistant', content: text });
      // Tool calls without tools to run (the last step) end the turn as they are.
      yield { type: 'finish', reason: calls.length > 0 ? 'tool_calls' : reason, usage, messages: produced };
      return;
    }

    produced.push({ role: 'assistant', content: text || null, toolCalls: calls });
    for (const call of calls) {
      yield { type: 'tool_call', call };
      const tool = byName.get(call.name);
      let content: string;
      let isError = false;
      try {
        if (!tool) throw new PlatformError('not_found', `There is no tool named ${call.name}`);
        content = await tool.run(parseArguments(call.arguments), turn.signal ? { signal: turn.signal } : {});
      } catch (error) {
        turn.signal?.throwIfAborted();
        isError = true;
        content = `Error: ${error instanceof Error ? error.message : String(error)}`;
      }
      produced.push({ role: 'tool', toolCallId: call.id, content });
      yield { type: 'tool_result', callId: call.id, name: call.name, content, isError };
    }
  }
}
