import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { openaiChatModel } from '@agent-platform/adapters-models/openai';
import { fileBlobStore } from '@agent-platform/adapters-storage/blobs';
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform } from '@agent-platform/core';

// `node dist/main.js memory` keeps everything in this process; `node dist/main.js sqlite ./data`
// keeps it in a folder: the SQLite database, the vectors and the documents' texts.
const [mode = 'memory', dataDir = './data'] = process.argv.slice(2);
const onDisk = mode === 'sqlite';
if (onDisk) await mkdir(dataDir, { recursive: true });

const platform = new AgentPlatform({
  storage: onDisk ? await sqliteStorage({ path: join(dataDir, 'agent-platform.db') }) : memoryStorage(),
  knowledge: {
    vectors: await builtinVectorStore(onDisk ? { dir: join(dataDir, 'vectors') } : {}),
    embedder: builtinEmbedder(), // offline, in worker threads
    ...(onDisk ? { blobs: fileBlobStore({ dir: join(dataDir, 'files') }) } : {}),
  },
  // Completions: any OpenAI-compatible server (OpenAI, vLLM, LM Studio, Ollama's /v1, ...).
  agent: {
    models: (config) =>
      openaiChatModel({
        baseURL: config.baseUrl ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
        apiKey: config.apiKey ?? process.env.OPENAI_API_KEY,
      }),
  },
});

try {
  await platform.start(); // resumes indexing an earlier run left unfinished
  // Every call names its caller: a user, made here with an API key of their own.
  const { userId } = await platform.createUserWithKey({ name: 'my app' });
  const me = { userId };

  // A project is an agent: its model, its knowledge base, its tools.
  const { project } = await platform.createProject(me, { name: 'Support bot', model: 'gpt-4o-mini', provider: 'openai' });
  console.log(`project: ${project.name} (${project.id}), storage: ${mode}`);

  // Add a document and follow its indexing to the end.
  const events = await platform.createDocumentStream(me, {
    projectId: project.id,
    fileName: 'refunds.md',
    fileType: 'md',
    sourceType: 'upload',
    content: '# Refunds\n\nRefunds are paid back to the card within 30 days of the return.\n\n# Shipping\n\nParcels ship on weekdays.',
  });
  for await (const event of events) {
    if (event.type === 'error') throw new Error(event.message);
    if (event.type === 'complete') console.log(`indexed: refunds.md (${event.documentId})`);
  }
  const { documents } = await platform.listDocuments(me, { projectId: project.id });
  console.log(`documents: ${documents.map((d) => `${d.fileName} ${d.status}, ${d.chunkCount} chunks`).join('; ')}`);

  // Search: hybrid by default (keywords and meaning).
  const found = await platform.search(me, { projectId: project.id, query: 'When do I get my money back?', topK: 3 });
  for (const hit of found.documents) console.log(`search: ${hit.metadata.fileName} ${hit.score.toFixed(2)} ${JSON.stringify(hit.content.slice(0, 40))}`);

  // A completion: the agent searches its knowledge, gives the model what is relevant and cites it.
  const answer = await platform.chatCompletion(me, { model: project.id, messages: [{ role: 'user', content: 'How long do refunds take?' }] }, { form: 'v1' });
  if (answer.stream) throw new Error('asked without stream: true');
  console.log(`answer: ${answer.body.choices[0]?.message.content}`);
  console.log(`sources: ${answer.body.sources.map((s) => `[${s.index}] ${s.fileName}`).join(', ')}`);
} finally {
  await platform.close(); // stops the workers and closes the storage
}
