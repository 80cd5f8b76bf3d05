import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type ChatEvent, type ChatModel, type ChatRequest, type EmbeddingModel, type ToolSource } from '@agent-platform/core';
import { afterEach, describe, expect, it } from 'vitest';
import { bagOfWords } from './helpers.js';

// What an agent's turn computes before the model call, and in which order: nothing it does not
// use (no query embedding for a project without knowledge), its independent inputs at once, and
// the turn's messages stored in order.

const dirs: string[] = [];
const platforms: AgentPlatform[] = [];
afterEach(async () => {
  await Promise.all(platforms.splice(0).map((p) => p.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A bag-of-words embedder that counts its calls; while `hold` is set, calls wait for it (3 s at most). */
function countingEmbedder() {
  const calls: string[][] = [];
  const state: { hold: Promise<void> | undefined } = { hold: undefined };
  const model: EmbeddingModel = {
    id: 'test:bow',
    dimensions: 64,
    async embed(texts) {
      calls.push([...texts]);
      if (state.hold) {
        // Released by the tool sources once they run beside it; a turn that waits for the search
        // before reading its tools never releases it.
        const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the held embedding was not released: the tool sources did not run beside it')), 3000).unref());
        await Promise.race([state.hold, late]);
      }
      return texts.map((t) => bagOfWords(t, 64));
    },
  };
  return { model, calls, state };
}

/** A model that calls `echo` once (when offered), then answers "done"; records every request. */
function scriptedModel(requests: ChatRequest[]): ChatModel {
  return {
    provider: 'openai',
    async *stream(request): AsyncIterable<ChatEvent> {
      requests.push(request);
      if (request.tools?.some((t) => t.name === 'echo') && request.messages.at(-1)?.role !== 'tool') {
        yield { type: 'tool_call', call: { id: 'call_1', name: 'echo', arguments: '{"text":"hi"}' } };
        yield { type: 'finish', reason: 'tool_calls' };
        return;
      }
      yield { type: 'text', delta: 'done' };
      yield { type: 'finish', reason: 'stop', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } };
    },
  };
}

async function setup(options: { embedder: EmbeddingModel; toolSources?: ToolSource[]; requests?: ChatRequest[] }) {
  const dir = await mkdtemp(join(tmpdir(), 'agent-turn-'));
  dirs.push(dir);
  const requests = options.requests ?? [];
  const platform = new AgentPlatform({
    storage: memoryStorage(),
    knowledge: { vectors: await builtinVectorStore({ dir }), embedder: () => options.embedder },
    agent: { models: () => scriptedModel(requests), ...(options.toolSources ? { toolSources: options.toolSources } : {}) },
  });
  platforms.push(platform);
  const { userId } = await platform.createUserWithKey({ name: 't' });
  const me = { userId };
  const { project } = await platform.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
  const ask = async (content: string, chatId?: string) => {
    const answer = await platform.chatCompletion(me, { model: project.id, messages: [{ role: 'user', content }], ...(chatId ? { chatId } : {}) }, { form: 'v1' });
    if (answer.stream) throw new Error('expected a whole answer');
    return answer.body;
  };
  /** Adds a document and waits until it is indexed (the machine may be slow: no fixed wait). */
  const addDocument = async (fileName: string, content: string) => {
    const { documentId } = await platform.createDocument(me, { projectId: project.id, fileName, fileType: 'txt', sourceType: 'upload', content });
    for (let i = 0; i < 600; i++) {
      const { document } = await platform.getDocument(me, documentId as string);
      if (document.status === 'completed') return;
      if (document.status === 'failed') throw new Error(`indexing failed: ${document.error}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('not indexed within 60 s');
  };
  return { platform, me, project, ask, addDocument };
}

describe('an agent turn', () => {
  it('does not embed the question, nor search, when the project has no knowledge', async () => {
    const { model, calls } = countingEmbedder();
    const { platform, me, project, ask, addDocument } = await setup({ embedder: model });
    expect((await ask('What do the documents say?')).choices[0]?.message.content).toBe('done');
    expect((await platform.searchKnowledge(me, { projectId: project.id, query: 'anything' })).documents).toEqual([]);
    expect(calls).toEqual([]);

    // With a document, the question is embedded and its chunk becomes a source.
    await addDocument('pumps.txt', 'The pump overheats when error E1234 shows.');
    calls.length = 0;
    const answer = await ask('Why does the pump overheat with error E1234?');
    expect(calls).toEqual([['Why does the pump overheat with error E1234?']]);
    expect(answer.sources.map((s) => s.fileName)).toEqual(['pumps.txt']);
  });

  it('reads its knowledge and every tool source at once', async () => {
    const { model, calls, state } = countingEmbedder();
    const started: string[] = [];
    let release = () => {};
    // Each source waits until the knowledge search (its query embedding) and the other source
    // have started, and only then lets the embedding finish: run one after another, the first
    // to start would wait for ever (it fails after 2 s).
    const everyoneStarted = () => started.length === 2 && calls.length === 1;
    const source = (name: string): ToolSource => ({
      async tools() {
        started.push(name);
        for (let i = 0; i < 200 && !everyoneStarted(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
        if (!everyoneStarted()) throw new Error(`not concurrent: started ${started.join(', ')}; embedder calls ${calls.length}`);
        release();
        return [];
      },
    });
    const { ask, addDocument } = await setup({ embedder: model, toolSources: [source('a'), source('b')] });
    await addDocument('a.txt', 'Pumps and valves.');
    calls.length = 0;
    state.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    expect((await ask('pumps?')).sources.map((s) => s.fileName)).toEqual(['a.txt']);
    expect(started.sort()).toEqual(['a', 'b']);
  });

  it('stores the turn in order: the question, the tool call, its result, the answer, after the history', async () => {
    const { model } = countingEmbedder();
    const requests: ChatRequest[] = [];
    const echo: ToolSource = {
      async tools() {
        return [{ definition: { name: 'echo', description: 'echoes', parameters: { type: 'object' } }, run: async (args) => `echo ${JSON.stringify(args)}` }];
      },
    };
    const { platform, me, project, ask } = await setup({ embedder: model, toolSources: [echo], requests });
    const { chat } = await platform.createChat(me, { projectId: project.id });
    await ask('first', chat.id);
    await ask('second', chat.id);
    const stored = (await platform.chatMessages(me, chat.id)).messages.map((m) => [m.role, m.content]);
    expect(stored).toEqual([
      ['user', 'first'],
      ['assistant', null],
      ['tool', 'echo {"text":"hi"}'],
      ['assistant', 'done'],
      ['user', 'second'],
      ['assistant', null],
      ['tool', 'echo {"text":"hi"}'],
      ['assistant', 'done'],
    ]);
    // The second turn's first model call saw the first turn as history, in order.
    const second = requests[2] as ChatRequest;
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
  });
});
