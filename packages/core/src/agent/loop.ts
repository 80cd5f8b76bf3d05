import { answerTooLarge } from '../net/bounded-body.js';
import { type ByteLimit, byteBudget, DEFAULT_UPSTREAM_LIMITS } from '../net/upstream-limits.js';
import type { SearchHit } from '../schemas/knowledge.js';
import type { ChatMessage, ChatModel, ChatRequest, FinishReason, ReasoningBlock, ResponseFormat, ToolCall, ToolChoice, ToolDefinition, Usage } from './chat-model.js';
import type { DecidedCall, QuestionAsker } from './questions.js';
import { type CallContext, runToolCall } from './tool-calls.js';
import type { AgentTool, ToolSampleRequest, ToolSampleResult } from './tools.js';

/** A knowledge hit that went into the model's context, as the response reports it. */
export interface Source {
  /** Citation number in the context, from 1. */
  readonly index: number;
  readonly chunkId: string;
  readonly documentId: string;
  readonly fileName: string;
  readonly score: number;
  readonly content: string;
  /** The text's first words (`excerptOf`), kept with the answer. */
  readonly excerpt: string;
}

/** Longest excerpt of a source kept with an answer, in characters (the ellipsis included). */
export const EXCERPT_CHARS = 160;

/**
 * A chunk's first words, whitespace collapsed: the whole text when it is at most `EXCERPT_CHARS`
 * characters, else cut at the last word boundary before that (mid-word only for a first word
 * longer than half of it) and ended with `…`.
 */
export function excerptOf(text: string): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  if (chars.length <= EXCERPT_CHARS) return chars.join('');
  const cut = chars.slice(0, EXCERPT_CHARS - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > EXCERPT_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

import type { AgentEvent } from './events.js';

export type { AgentEvent } from './events.js';

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
  /**
   * Functions the client runs itself (OpenAI's `tools` of the request), offered beside `tools`
   * (their names must differ). When the model calls one, the agent's own calls of that step run
   * first, then the turn ends with finish reason `tool_calls` and the client's calls.
   */
  readonly clientTools?: readonly ToolDefinition[];
  /**
   * OpenAI's `tool_choice` over every tool offered. `none` offers none; `required` and a named
   * tool bind the first model call only (later steps are `auto`, or every step would have to call
   * a tool). Default `auto`.
   */
  readonly toolChoice?: 'none' | ToolChoice;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /**
   * The answer's shape, given to every model call of the turn (as OpenAI takes `response_format`
   * beside `tools`: a step may still call tools, the answer follows the format). Only for a
   * model whose `capabilities.structuredOutputs` is true. Default: free text.
   */
  readonly responseFormat?: ResponseFormat;
  /** Given to every model call as they are; `parallelToolCalls` only to calls offered tools. */
  readonly modelSettings?: Pick<ChatRequest, 'topP' | 'frequencyPenalty' | 'presencePenalty' | 'seed' | 'stop' | 'parallelToolCalls' | 'providerOptions'>;
  /** Model calls at most; the last one is offered no tools, so it answers. Default 8. */
  readonly stepLimit?: number;
  /**
   * Most bytes of one message of the turn: the model's text and tool calls of one step (past
   * it the model is cut off and the turn fails), one tool's result (past it the model gets the
   * tool's error instead). Default `DEFAULT_UPSTREAM_LIMITS.messageBytes` (1 MiB).
   */
  readonly messageLimit?: ByteLimit;
  /**
   * Calls a person decided, of the chat's last assistant message (`history` ends with it): run
   * (approved) or answered as denied before the first model call; their results come before
   * `input`. A turn that continues a paused one.
   */
  readonly resume?: readonly DecidedCall[];
  /** Asks the person when a running tool wants to know something (MCP elicitation); without it tools cannot ask. */
  readonly questions?: QuestionAsker;
  readonly signal?: AbortSignal;
}

/** The message limit when a turn names none. */
const DEFAULT_MESSAGE_LIMIT: ByteLimit = { bytes: DEFAULT_UPSTREAM_LIMITS.messageBytes, setting: 'the agent messageLimit option' };

/** The most tokens a tool's completion (`ToolRunContext.sample`) may ask for when the turn sets no `maxTokens`. */
export const DEFAULT_SAMPLING_MAX_TOKENS = 4096;

/** The optional counts of `Usage`, summed where either side has one. */
const OPTIONAL_COUNTS = ['cachedPromptTokens', 'cacheWritePromptTokens', 'reasoningTokens'] as const;

const addUsage = (a: Usage, b: Usage | undefined): Usage => {
  if (!b) return a;
  const sum: { -readonly [K in keyof Usage]: Usage[K] } = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  for (const key of OPTIONAL_COUNTS) if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  return sum;
};

/** The system context with numbered knowledge excerpts, or undefined when there is nothing to say. */
export function systemContext(instructions: string | undefined, hits: readonly SearchHit[]): { system?: string; sources: Source[] } {
  const sources: Source[] = hits.map((h, i) => ({
    index: i + 1,
    chunkId: h.id,
    documentId: String(h.metadata.documentId ?? ''),
    fileName: String(h.metadata.fileName ?? ''),
    score: h.score,
    content: h.content,
    excerpt: excerptOf(h.content),
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
 * One agent turn: model calls with the tools offered, the tools' results fed back, until the
 * model answers, calls a client's function, or the step limit is reached. Yields text as it
 * streams. The `finish` event carries the new messages of the turn (the assistant's tool calls,
 * the tool results and the final answer) for the caller to store, and the client's calls to run.
 *
 * The model is given the system context, the request's system messages, the history, then the
 * rest of the request: a request that continues a turn (tool results for the last stored
 * assistant message) stays well-formed whatever system messages it carries.
 */
export async function* runAgentTurn(turn: AgentTurn): AsyncGenerator<AgentEvent> {
  const stepLimit = Math.max(1, turn.stepLimit ?? 8);
  const byName = new Map(turn.tools.map((t) => [t.definition.name, t]));
  const clientTools = turn.clientTools ?? [];
  const forClient = new Set(clientTools.map((t) => t.name));
  const definitions = [...turn.tools.map((t) => t.definition), ...clientTools];
  const { parallelToolCalls, ...settings } = turn.modelSettings ?? {};
  const produced: ChatMessage[] = [];
  let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const system = turn.input.filter((m) => m.role === 'system');
  const input = turn.input.filter((m) => m.role !== 'system');
  const limit = turn.messageLimit ?? DEFAULT_MESSAGE_LIMIT;
  // A tool's completion (MCP sampling) on the turn's model, bounded by the turn's limits, counted in its usage.
  const sample = async (request: ToolSampleRequest): Promise<ToolSampleResult> => {
    const budget = byteBudget(limit.bytes, () => answerTooLarge(`The model ${turn.modelName}`, 'an answer', limit.bytes, limit.setting));
    let answer = '';
    let finishReason: FinishReason = 'stop';
    const signal = request.signal ?? turn.signal;
    for await (const event of turn.model.stream({
      model: turn.modelName,
      messages: [...(request.system ? [{ role: 'system' as const, content: request.system }] : []), ...request.messages],
      ...(settings.providerOptions ? { providerOptions: settings.providerOptions } : {}),
      maxTokens: Math.max(1, Math.min(request.maxTokens, turn.maxTokens ?? DEFAULT_SAMPLING_MAX_TOKENS)),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.stop && request.stop.length > 0 ? { stop: request.stop } : {}),
      ...(signal ? { signal } : {}),
    })) {
      if (event.type === 'text') {
        budget.add(event.delta);
        answer += event.delta;
      } else if (event.type === 'finish') {
        finishReason = event.reason;
        usage = addUsage(usage, event.usage);
      }
    }
    return { text: answer, model: turn.modelName, finishReason };
  };
  const context: CallContext = { tools: byName, limit, signal: turn.signal, questions: turn.questions, sample };
  // The decided calls of a paused turn: their results first, as the chat's waiting calls need.
  const resumed: ChatMessage[] = [];
  for (const decided of turn.resume ?? []) resumed.push(yield* runToolCall(decided.call, context, decided));
  const carried = resumed.length > 0 ? { resumed } : {};

  for (let step = 1; ; step++) {
    const offerTools = definitions.length > 0 && step < stepLimit && turn.toolChoice !== 'none';
    const choice = step === 1 && typeof turn.toolChoice === 'object' ? turn.toolChoice : step === 1 && turn.toolChoice === 'required' ? 'required' : undefined;
    const messages: ChatMessage[] = [...(turn.system ? [{ role: 'system' as const, content: turn.system }] : []), ...system, ...turn.history, ...resumed, ...input, ...produced];
    let text = '';
    const calls: ToolCall[] = [];
    let reason: FinishReason = 'stop';
    let reasoning: readonly ReasoningBlock[] | undefined;
    // The step's message, counted as it streams: past the limit the model is cut off (leaving
    // the loop closes its stream), so no more of it is read, sent on, recorded or stored.
    const message = byteBudget(limit.bytes, () => answerTooLarge(`The model ${turn.modelName}`, 'an answer', limit.bytes, limit.setting));
    for await (const event of turn.model.stream({
      model: turn.modelName,
      messages,
      ...settings,
      ...(offerTools ? { tools: definitions } : {}),
      ...(offerTools && choice ? { toolChoice: choice } : {}),
      ...(offerTools && parallelToolCalls !== undefined ? { parallelToolCalls } : {}),
      ...(turn.temperature !== undefined ? { temperature: turn.temperature } : {}),
      ...(turn.maxTokens !== undefined ? { maxTokens: turn.maxTokens } : {}),
      ...(turn.responseFormat ? { responseFormat: turn.responseFormat } : {}),
      ...(turn.signal ? { signal: turn.signal } : {}),
    })) {
      if (event.type === 'text') {
        message.add(event.delta);
        text += event.delta;
        yield event;
      } else if (event.type === 'tool_call') {
        message.add(event.call.id);
        message.add(event.call.name);
        message.add(event.call.arguments);
        calls.push(event.call);
      } else if (event.type === 'reasoning') {
        yield event;
      } else {
        reason = event.reason;
        usage = addUsage(usage, event.usage);
        if (event.reasoning && event.reasoning.length > 0) reasoning = event.reasoning;
      }
    }

    if (calls.length === 0 || !offerTools) {
      produced.push({ role: 'assistant', content: text });
      // Tool calls without tools to run (the last step) end the turn as they are.
      yield { type: 'finish', reason: calls.length > 0 ? 'tool_calls' : reason, usage, messages: produced, ...carried };
      return;
    }

    // The step's reasoning goes back with its tool calls (Claude's extended thinking requires the signed block with the results).
    produced.push({ role: 'assistant', content: text || null, toolCalls: calls, ...(reasoning ? { reasoning } : {}) });
    // The agent's own calls run here, also in a step that calls the client's functions too: the
    // client then gets its calls with the agent's results already in the conversation. Calls of
    // tools that need a person's approval are held: the turn pauses once the others have run.
    const held = calls.filter((call) => !forClient.has(call.name) && byName.get(call.name)?.requiresApproval);
    for (const call of calls) {
      if (forClient.has(call.name) || held.includes(call)) continue;
      produced.push(yield* runToolCall(call, context));
    }
    const clientCalls = calls.filter((call) => forClient.has(call.name));
    if (clientCalls.length > 0 || held.length > 0) {
      yield {
        type: 'finish',
        reason: 'tool_calls',
        usage,
        messages: produced,
        ...(clientCalls.length > 0 ? { toolCalls: clientCalls } : {}),
        ...(held.length > 0 ? { approvals: held } : {}),
        ...carried,
      };
      return;
    }
  }
}
