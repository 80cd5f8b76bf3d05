// Mastra's HTTP server for `pnpm bench mastra` (bench/mastra.mjs), a child process that reports
// its URL over IPC like bench/servers.mjs and exits when the parent disconnects.
//   node server.mjs mastra '<json>'   Mastra (core + Hono adapter on @hono/node-server) with:
//       an agent `bench` whose model is an OpenAI-compatible provider on the bench's loopback
//       upstream (json.upstream), with Memory on LibSQLStore (a file in json.dir), and the same
//       agent without memory, `bench-stateless`; SimpleAuth
//       with json.token as the bearer token (so both sides authenticate every request), its user
//       mapped to the resource `bench-user`; json.threads memory threads of that resource, made
//       at start, for the list row; and RAG on LibSQLVector (another file in json.dir) with
//       the same upstream's fake embeddings (json.dimensions) and json.chunking. Mastra has no HTTP route that ingests or searches text (its vector routes
//       take vectors), so its documented RAG pipeline runs in this process behind two routes
//       of this script: POST /bench/ingest { index, id, text } (MDocument chunk, embedMany,
//       LibSQLVector upsert) and POST /bench/search { index, query, topK } (embed, query).
//   node server.mjs floor <bodyFile>  Hono on @hono/node-server answering the same bytes: the
//                                     floor of Mastra's HTTP stack, as bench/servers.mjs `floor` is ours.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const [kind, arg] = process.argv.slice(2);
/** The bench user's id, and so the resource that owns its memory threads. */
const RESOURCE = 'bench-user';

/** Serves `app` on 127.0.0.1 (an ephemeral port), tells the parent its URL, exits on disconnect. */
function listen(app) {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.send({ url: `http://127.0.0.1:${info.port}` }));
  process.on('disconnect', () => server.close(() => process.exit(0)));
}

if (kind === 'floor') {
  const body = readFileSync(arg);
  listen(new Hono().get('*', (c) => c.body(body, 200, { 'content-type': 'application/json; charset=utf-8' })));
} else if (kind === 'mastra') {
  listen(await mastraApp(JSON.parse(arg)));
} else {
  throw new Error(`unknown server kind ${kind}`);
}

async function mastraApp({ dir, upstream, token, threads, chunking, dimensions }) {
  const { Mastra } = await import('@mastra/core');
  const { Agent } = await import('@mastra/core/agent');
  const { ModelRouterEmbeddingModel } = await import('@mastra/core/llm');
  const { registerApiRoute, SimpleAuth } = await import('@mastra/core/server');
  const { LibSQLStore, LibSQLVector } = await import('@mastra/libsql');
  const { Memory } = await import('@mastra/memory');
  const { MDocument } = await import('@mastra/rag');
  const { MastraServer } = await import('@mastra/hono');
  const { embed, embedMany } = await import('ai');

  const storage = new LibSQLStore({ id: 'bench-storage', url: `file:${join(dir, 'mastra.db')}` });
  const vectors = new LibSQLVector({ id: 'bench-vectors', url: `file:${join(dir, 'vectors.db')}` });
  const embedder = new ModelRouterEmbeddingModel({ providerId: 'bench', modelId: 'fake-embed', url: upstream, apiKey: 'sk-bench' });
  // Two agents on the same model: `bench` has Memory (a turn names its thread, which holds the
  // conversation), `bench-stateless` has none (like a completion of ours without a chatId).
  const agentConfig = { instructions: 'You are a helpful assistant.', model: { id: 'bench/gpt-bench', url: upstream, apiKey: 'sk-bench' } };
  const agent = new Agent({ id: 'bench', name: 'bench', ...agentConfig, memory: new Memory({ storage }) });
  const stateless = new Agent({ id: 'bench-stateless', name: 'bench-stateless', ...agentConfig });
  const indexes = new Set();
  const json = async (c) => c.req.json();
  const mastra = new Mastra({
    agents: { bench: agent, 'bench-stateless': stateless },
    storage,
    vectors: { bench: vectors },
    server: {
      // The resource (owner of threads) is the signed-in user's, as Mastra's docs advise when
      // auth is on, so threads are scoped to their owner as our projects are.
      auth: new SimpleAuth({ tokens: { [token]: { id: RESOURCE, name: 'bench' } }, mapUserToResourceId: (user) => user.id }),
      apiRoutes: [
        registerApiRoute('/bench/ingest', {
          method: 'POST',
          handler: async (c) => {
            const { index, id, text } = await json(c);
            if (!indexes.has(index)) {
              await vectors.createIndex({ indexName: index, dimension: dimensions });
              indexes.add(index);
            }
            const chunks = await MDocument.fromText(text, { documentId: id }).chunk(chunking);
            const { embeddings } = await embedMany({ model: embedder, values: chunks.map((ch) => ch.text) });
            await vectors.upsert({ indexName: index, vectors: embeddings, metadata: chunks.map((ch) => ({ text: ch.text, documentId: id })) });
            return c.json({ chunks: chunks.length });
          },
        }),
        registerApiRoute('/bench/search', {
          method: 'POST',
          handler: async (c) => {
            const { index, query, topK } = await json(c);
            const { embedding } = await embed({ model: embedder, value: query });
            return c.json({ results: await vectors.query({ indexName: index, queryVector: embedding, topK }) });
          },
        }),
      ],
    },
  });

  const memory = await agent.getMemory();
  for (let i = 0; i < threads; i++) await memory.createThread({ resourceId: RESOURCE, title: `Thread ${i}`, metadata: { n: i } });

  const app = new Hono();
  await new MastraServer({ app, mastra }).init();
  return app;
}
