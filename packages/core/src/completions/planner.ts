import { type ChatMessage, type ChatModel, messageText, type ProviderCredential, providerConfig } from '../agent/chat-model.js';
import { type AgentEvent, runAgentTurn, type Source, systemContext } from '../agent/loop.js';
import type { QuestionAsker } from '../agent/questions.js';
import { checkToolResults, newToChat } from '../agent/tool-results.js';
import type { ToolSource } from '../agent/tools.js';
import type { Caller, PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { randomString } from '../ids.js';
import { checkProviderOptions, isModelProvider } from '../registries/model-providers.js';
import { AGENT_MIN_SCORE, type SearchHit } from '../schemas/knowledge.js';
import type { ChatMessageRecord, MessageSource, StoredContentPart } from '../storage/types.js';
import { allowTools } from './allowed-tools.js';
import { type AnswerSchemaValidator, checkAnswer, checkResponseSchema, formatInstruction } from './answer-format.js';
import { type ApprovalDesk, decidedCalls, resumeSettings, waitingCalls } from './approval-desk.js';
import { type ChatImageStore, imageLoader, storedParts, withoutImages } from './chat-images.js';
import { sourcesOut } from './chunks.js';
import { countMessageTokens, DEFAULT_HISTORY_TOKENS, fitHistory, readRecentTurns } from './history.js';
import { checkImageCapability, imageParts, loadImages } from './images.js';
import type { AgentOptions, OperatorKeyLimits } from './options.js';
import { parkResults, stillPaused } from './parked.js';
import { withCredentialNamed } from './refused-credential.js';
import { checkTools, operatorLimited, responseFormatOf, toChatMessages, turnSettings } from './request.js';
import type { AgentPlanner, CompletionPlan, PlanRequest, PlanTarget } from './types.js';

/** The caller's credential of a provider call (the credentials area implements it). */
export interface CredentialResolver {
  /** The credential of a call: the project's (`credentialId`), else the caller's default of the provider, else none. */
  resolve(caller: Caller, provider: string, credentialId: string | null): Promise<ProviderCredential | undefined>;
}

/** The knowledge search of an agent's turn (the knowledge area implements it). */
export interface KnowledgeSearch {
  /** The project's hits for `query`, with the project's search settings; `defaultMinScore` when the project sets no `minScore`. */
  search(caller: Caller, projectId: string, request: { query: string; defaultMinScore: number }): Promise<SearchHit[]>;
}

/** What the planner needs besides the shared context. */
export interface CompletionPlannerDeps {
  readonly agent: AgentOptions;
  /** Where agents' tools come from: project tools, MCP servers and `agent.toolSources`, in that order. */
  readonly tools: readonly ToolSource[];
  /** Undefined when the platform has no knowledge base: agents then search nothing. */
  readonly knowledge: KnowledgeSearch | undefined;
  readonly credentials: CredentialResolver;
  /** Where the images of chats' messages are kept (the chats area). */
  readonly images: ChatImageStore;
  /** Checks answers against a `response_format` JSON schema (the tools area's validator). */
  readonly answers: AnswerSchemaValidator;
  /** Where the calls a person approves and the questions of MCP servers are kept (the approvals area). */
  readonly approvals: ApprovalDesk;
}

const splitModel = (value: string): { provider: string; model: string } => {
  const at = value.indexOf(':');
  return at > 0 && isModelProvider(value.slice(0, at)) ? { provider: value.slice(0, at), model: value.slice(at + 1) } : { provider: 'openai', model: value };
};

/** What a stored message is: `provider` names the provider of a message its model wrote (whose reasoning and calls' data go back to it alone). */
interface RecordOf {
  readonly createdAt: Date;
  readonly sources?: readonly MessageSource[] | undefined;
  readonly parts?: readonly StoredContentPart[] | undefined;
  readonly provider?: string | undefined;
}

const toRecord = (m: ChatMessage, { createdAt, sources, parts, provider }: RecordOf): Omit<ChatMessageRecord, 'chatId' | 'position'> => ({
  role: m.role,
  // A user message's images are kept as references in its parts (`content` is its text).
  content: m.role === 'user' ? messageText(m.content) : m.content,
  toolCalls: m.role === 'assistant' && m.toolCalls ? [...m.toolCalls] : null,
  toolCallId: m.role === 'tool' ? m.toolCallId : null,
  ...(sources && sources.length > 0 ? { sources } : {}),
  ...(parts ? { parts } : {}),
  ...(m.role === 'assistant' && provider ? { provider, ...(m.reasoning?.length ? { reasoning: m.reasoning } : {}) } : {}),
  createdAt,
});

const lastUserText = (messages: readonly ChatMessage[]): string | undefined => {
  const content = messages.findLast((m) => m.role === 'user')?.content;
  return content ? messageText(content) : undefined;
};

/**
 * Plans and runs a chat completion: picks the agent (a project) or a plain model, loads the
 * chat's history, searches the knowledge base, gathers the tools, runs the agent turn, and
 * stores the turn in the chat when it completes (nothing when it fails or is aborted).
 */
export class CompletionPlanner implements AgentPlanner {
  readonly #ctx: PlatformContext;
  readonly #agent: AgentOptions;
  readonly #deps: CompletionPlannerDeps;

  constructor(ctx: PlatformContext, deps: CompletionPlannerDeps) {
    this.#ctx = ctx;
    this.#agent = deps.agent;
    this.#deps = deps;
  }

  /** The model of a call, and the operator's limits when it runs on the operator's key (no credential of the caller's). */
  async #model(caller: Caller, provider: string, credentialId: string | null): Promise<{ model: ChatModel; operator: OperatorKeyLimits | undefined }> {
    if (provider === 'local') {
      throw new PlatformError('unsupported', 'The local provider has no bundled model in this version; use openai or ollama');
    }
    const credential = await this.#deps.credentials.resolve(caller, provider, credentialId);
    const model = withCredentialNamed(this.#agent.models(providerConfig(provider, credential)), provider, credential);
    return { model, operator: credential ? undefined : this.#agent.operatorKey?.[provider] };
  }

  plan(caller: Caller, request: PlanRequest, target: PlanTarget, signal: AbortSignal | undefined): Promise<CompletionPlan> {
    return this.#plan(caller, request, target, signal, false);
  }

  /** `parked`: the request's tool results were stored while the turn waited for decisions (see parked.ts); it is not parked again. */
  async #plan(caller: Caller, request: PlanRequest, target: PlanTarget, signal: AbortSignal | undefined, parked: boolean): Promise<CompletionPlan> {
    const requested = toChatMessages(request.messages);
    const { project, chat } = target;
    let modelName: string;
    let provider: string;
    if (project) {
      modelName = project.model;
      provider = project.provider;
    } else {
      const chosen = request.model ? { provider: request.provider ?? 'openai', model: request.model } : splitModel(this.#agent.defaultModel ?? 'openai:gpt-4o-mini');
      modelName = chosen.model;
      provider = chosen.provider;
    }
    // The provider's own options: the request's over the project's, checked against the provider (400 naming the key).
    const providerOptions = { ...project?.providerOptions, ...request.provider_options };
    checkProviderOptions(provider, providerOptions, [request.provider_options ? 'provider_options' : 'providerOptions']);
    // The turn's inputs do not depend on each other: the credential, the chat's history, the
    // knowledge hits and each source's tools are read at once. A request with no question of its
    // own (tool results continuing the chat's last turn) searches with the chat's last question.
    // The chat is read from its end only as far as the budget reaches.
    const budget = this.#agent.historyTokens ?? DEFAULT_HISTORY_TOKENS;
    const images = this.#deps.images;
    // A chat made with this turn has no history to read.
    const history =
      chat && !target.insertChat ? readRecentTurns(this.#ctx.storage, chat.userId, chat.id, budget, { load: imageLoader(images, chat.userId, chat.id), provider }) : Promise.resolve(undefined);
    const question = project && this.#deps.knowledge ? (lastUserText(requested) ?? (chat ? history.then((h) => h?.question) : undefined)) : undefined;
    const knowledge = this.#deps.knowledge;
    // A turn whose messages could not be stored is refused before the model is called.
    const caps = this.#ctx.caps;
    const adding = requested.filter((m) => m.role !== 'system').length + 1;
    const room = chat ? caps.checkEach(this.#ctx.storage, caller.userId, target.insertChat ? { messages: adding, chats: 1 } : { messages: adding }) : undefined;
    const [{ model, operator }, recent, hits, toolLists] = await Promise.all([
      this.#model(caller, provider, project?.credentialId ?? null),
      history,
      // Below the relevance floor a hit is noise: neither context for the model nor a source.
      Promise.resolve(question).then((query) =>
        project && knowledge && query?.trim() ? knowledge.search(caller, project.id, { query, defaultMinScore: this.#agent.minScore ?? AGENT_MIN_SCORE }) : [],
      ),
      project ? Promise.all(this.#deps.tools.map((source) => source.tools(caller, project.id))) : [],
      room,
    ]);
    const { system, sources } = project ? systemContext(project.instructions, hits) : { system: undefined, sources: [] as Source[] };
    const requestedSettings = turnSettings(request);
    // `allowed_tools`: only those are offered this turn.
    const allowed = request.allowedTools ? allowTools(toolLists.flat(), requestedSettings.clientTools ?? [], request.allowedTools) : undefined;
    const tools = allowed?.agent ?? toolLists.flat();
    const limited = operatorLimited(allowed ? { ...requestedSettings, clientTools: allowed.client } : requestedSettings, modelName, provider, operator);
    const settings = Object.keys(providerOptions).length > 0 ? { ...limited, modelSettings: { ...limited.modelSettings, providerOptions } } : limited;
    checkTools(
      model,
      toolLists.flat().map((t) => t.definition.name),
      settings,
    );
    // With a chat, what the client resent of it is not new (see newToChat: only a chat waiting
    // for tool results has any, and its pending calls are always read); every tool call of the
    // conversation must have its result before the model is asked again. The history is what
    // the budget leaves after the system context and the request's own messages.
    // Images: refused for a model that cannot take them, else fetched or decoded and checked.
    const pictured = imageParts(request.messages);
    checkImageCapability(model, modelName, pictured);
    const format = responseFormatOf(request.response_format);
    const answers = this.#deps.answers;
    await checkResponseSchema(format, answers, caller.userId);
    const loaded = pictured.length > 0 ? toChatMessages(request.messages, await loadImages(pictured, { fetch: this.#ctx.fetch, limits: this.#agent.images, signal })) : requested;
    // A model without structured outputs is told the format in the system prompt; its answer is checked all the same.
    const native = model.capabilities?.structuredOutputs === true;
    const prompt = format && !native ? [system, formatInstruction(format)].filter(Boolean).join('\n\n') : system;
    const input = recent ? newToChat(recent.pending, loaded) : loaded;
    // A chat paused for approval goes on from the decided calls (`conflict` while one is pending).
    const desk = this.#deps.approvals;
    // The continuation claims the turn there (`conflict` while another holds it): continued once.
    const waiting = recent && chat ? waitingCalls(recent.pending, input) : [];
    // The client's results of a step that also waits for decisions are kept: the pause goes on, or, decided meanwhile, the turn.
    const stillPending = recent && chat && !parked ? await parkResults(this.#ctx, desk, caller, chat, { pending: recent.pending, input, requested: loaded, waiting }) : undefined;
    if (stillPending?.length) return stillPaused(this.#ctx.clock.now(), project ? project.id : modelName, chat, stillPending);
    if (stillPending) return this.#plan(caller, { ...request, messages: request.messages.filter((m) => m.role === 'system' || m.role === 'developer') }, target, signal, true);
    const settled =
      waiting.length > 0 && chat
        ? await desk.settle(
            caller,
            chat.id,
            waiting.map((c) => c.id),
          )
        : undefined;
    const resume = settled ? decidedCalls(waiting, settled.calls) : [];
    const resumed: ChatMessage[] = resume.map((d) => ({ role: 'tool', toolCallId: d.call.id, content: '' }));
    let earlier: ChatMessage[];
    try {
      const fitted = recent ? fitHistory(recent, await countMessageTokens([...(prompt ? [{ role: 'system' as const, content: prompt }] : []), ...input], budget)) : [];
      earlier = model.capabilities?.images ? fitted : withoutImages(fitted);
      checkToolResults(earlier, [...resumed, ...input], loaded);
    } catch (error) {
      settled?.hold.end(false);
      throw error;
    }

    const createdAt = this.#ctx.clock.now();
    const storage = this.#ctx.storage;
    const stored = sourcesOut(sources);
    const turn = runAgentTurn({
      model,
      modelName,
      ...(prompt ? { system: prompt } : {}),
      history: earlier,
      input,
      tools,
      ...settings,
      ...(this.#agent.stepLimit ? { stepLimit: this.#agent.stepLimit } : {}),
      ...(this.#agent.messageLimit ? { messageLimit: this.#agent.messageLimit } : {}),
      ...(format && native ? { responseFormat: format } : {}),
      ...(resume.length > 0 ? { resume } : {}),
      // A chat made with this turn is not stored yet: its questions belong to the project alone.
      ...(project
        ? { questions: { ask: (call, request, s) => desk.ask(caller, { projectId: project.id, chatId: chat && !target.insertChat ? chat.id : null }, call, request, s) } satisfies QuestionAsker }
        : {}),
      ...(signal ? { signal } : {}),
    });
    const newChat = target.newChat;
    const events: AsyncIterable<AgentEvent> = {
      async *[Symbol.asyncIterator]() {
        // The continuation's claim is renewed while the turn runs; kept once the turn is stored, freed if it fails.
        let failed = true;
        try {
          yield* storedTurn();
          failed = false;
        } finally {
          settled?.hold.end(!failed);
        }
      },
    };
    async function* storedTurn(): AsyncGenerator<AgentEvent> {
      for await (const event of turn) {
        // The answer must have the format asked before anything of the turn is stored or finished.
        if (event.type === 'finish' && format && event.reason !== 'tool_calls') {
          const answer = event.messages.findLast((m: ChatMessage) => m.role === 'assistant')?.content ?? '';
          await checkAnswer(format, answer, answers, caller.userId, signal);
        }
        // A turn that pauses for approval is kept in a chat: a new one when it has none.
        const paused = event.type === 'finish' && project && event.approvals?.length ? event.approvals : undefined;
        const into = chat ?? (paused && newChat ? await newChat() : undefined);
        if (event.type === 'finish' && into) {
          // The turn is stored only once it has completed (or paused): the results of the
          // decided calls it went on from, the request's new messages (not its system prompt),
          // the tool calls and results, and the answer; the assistant message that ends the
          // turn keeps the sources the response gives.
          const own = [...(event.resumed ?? []), ...input.filter((m) => m.role !== 'system')];
          const requestedCount = own.length;
          const fresh = [...own, ...event.messages];
          const last = fresh.findLastIndex((m) => m.role === 'assistant');
          // Images are put in the store first: a message never refers to an image that is not there.
          const parts = await Promise.all(fresh.map((m) => storedParts(m, images, into.userId, into.id)));
          // Within the user's cap of messages, decided under the user's lock: over it the turn
          // is not stored (and the stream ends with the error).
          await storage.transaction(async (tx) => {
            if (target.insertChat) {
              await caps.reserve(tx, caller.userId, 'chats');
              await tx.chats.insert(into);
            }
            await caps.reserve(tx, caller.userId, 'messages', fresh.length);
            await tx.chats.appendMessages(
              into.userId,
              into.id,
              // The turn's own messages (after the request's) are the model's: its provider's data stays with them.
              fresh.map((m, i) => toRecord(m, { createdAt, sources: i === last ? stored : undefined, parts: parts[i], provider: i >= requestedCount ? provider : undefined })),
            );
          });
          await storage.chats.touch(into.userId, into.id, createdAt);
        }
        if (paused && project && into) {
          const approvals = await desk.pause(caller, { projectId: project.id, chatId: into.id, calls: paused, resume: resumeSettings(request) });
          yield { type: 'approval_required', approvals };
        }
        yield event;
      }
    }
    return {
      id: `chatcmpl-${randomString(24)}`,
      created: Math.floor(createdAt.getTime() / 1000),
      responseModel: project ? project.id : modelName,
      chat,
      sources,
      events,
    };
  }
}
