import type { AgentEvent, Source } from '../agent/loop.js';
import type { Caller } from '../context.js';
import type { CompletionMessage } from '../schemas/completions.js';
import type { ChatRecord, ProjectRecord } from '../storage/types.js';
import type { AllowedTool } from './allowed-tools.js';
import type { CompletionSettings } from './request.js';

export type { StreamRecord, StreamStore, StreamWriter } from './streams/stream-store.js';
export type { CompletionSettings };

/** An agent run planned for a completion (or a response): its events are the turn, run as they are read. */
export interface CompletionPlan {
  readonly id: string;
  readonly created: number;
  /** The `model` of the response: the project id for an agent, else the model name. */
  readonly responseModel: string;
  readonly chat: ChatRecord | undefined;
  readonly sources: readonly Source[];
  readonly events: AsyncIterable<AgentEvent>;
}

/** What a run is asked: the chat completion's settings, its messages, and the model when there is no project. */
export type PlanRequest = CompletionSettings & {
  model?: string | null | undefined;
  messages: readonly CompletionMessage[];
  provider?: string | undefined;
  /** Only these tools are offered this turn (`tool_choice` of type `allowed_tools`); a 400 naming one that is no tool of the turn. */
  allowedTools?: readonly AllowedTool[] | undefined;
};

/** Who answers and where the turn is kept. */
export interface PlanTarget {
  /** The agent; undefined for a plain model. */
  readonly project: ProjectRecord | undefined;
  /** The chat whose history is sent and where the completed turn is stored; none: nothing is stored. */
  readonly chat: ChatRecord | undefined;
  /**
   * `chat` does not exist yet (an id the service made, so no one else can take it): it is
   * inserted with the turn's messages, in their transaction, once the turn completes (within the
   * user's cap of chats). Default false.
   */
  readonly insertChat?: boolean;
  /** A chat of the project for a turn that pauses for approval without one (it is stored there). */
  readonly newChat?: (() => Promise<ChatRecord>) | undefined;
}

/**
 * Plans agent runs: the completions area's planner, which the responses area runs its
 * responses on (so both routes run the same agent, the same way).
 */
export interface AgentPlanner {
  /**
   * Picks the agent (`project`) or a plain model, loads the chat's history, searches the
   * knowledge base, gathers the tools and refuses what the run could not honour (400 naming the
   * member) before any model call; the run itself starts when `events` is read, and stores its
   * turn in `chat` when it completes.
   */
  plan(caller: Caller, request: PlanRequest, target: PlanTarget, signal: AbortSignal | undefined): Promise<CompletionPlan>;
}

/** The chats a completion reads, writes and opens (the chats area implements it). */
export interface ChatOpener {
  /** The caller's chat of that id; `not_found` when the caller has none. */
  get(caller: Caller, chatId: string): Promise<ChatRecord>;
  /**
   * The caller's chat of an id the client chose, created (in `projectId`) when the caller has
   * none (`invalid_request` for an id without the form of a chat id).
   */
  open(caller: Caller, chatId: string, projectId: string): Promise<ChatRecord>;
}
