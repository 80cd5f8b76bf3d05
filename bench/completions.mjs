// Overhead of the service on a chat completion: time to first token (TTFT) and total time,
// p50/p99 over sequential streaming requests, through the real server (child process) and
// directly to the same upstream, sides interleaved request by request in one run:
//   proxyFloor the least a proxy on our HTTP stack adds (bench/servers.mjs proxy-floor: h3 on
//              srvx, fetch() upstream, the answer's bytes streamed back untouched);
//   plain      a plain model name (no agent);
//   agent      a project with no knowledge, no tools, no MCP servers;
//   knowledge  a project with 10,000 knowledge chunks (its turn embeds the question and
//              searches first); reported as added minus the query embedding, measured on the
//              same built-in model in this process;
//   mcp        a project with one MCP server (server-everything over streamable HTTP): the model
//              calls its `echo` tool once, then answers. The round's cost is its TTFT minus the
//              agent's, minus the direct tool call (SDK Client) and the direct tool-call answer
//              of the upstream.
// Also whether streaming buffers: with the upstream sending a chunk every 20 ms, the gaps
// between chunks the client receives through the service. BENCH_STORAGE (bench/modes.mjs) picks
// the server's storage mode; with `both`, the four sides through the service run on each mode,
// all interleaved, the knowledge chunks written into each mode's storage and vector store.
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startChild } from './child.mjs';
import { percentile } from './load.mjs';
import { startHttpEverything } from './mcp.mjs';
import { withStorageModes } from './modes.mjs';
import { startBenchUpstream } from './upstream.mjs';
import { embeddingsLike } from './vectors.mjs';

export const round = (ms) => Math.round(ms * 100) / 100;

/**
 * One streaming request; times of the first content chunk (the first one whose data contains
 * `marker`: the bench upstream's words, in OpenAI's chunk format unless told) and of the end,
 * and arrival times of content chunks.
 */
export async function streamOnce(url, headers, body, marker = '"content":"word') {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let first;
  let buffer = '';
  const arrivals = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    if (buffer.includes(marker)) {
      const now = performance.now() - t0;
      first ??= now;
      arrivals.push(now);
      buffer = '';
    }
  }
  if (first === undefined && !body.tools) throw new Error(`${url}: no content in the answer`);
  return { ttft: first, total: performance.now() - t0, arrivals };
}

const summary = (xs) => ({ p50: round(percentile(xs, 50)), p99: round(percentile(xs, 99)) });

/**
 * Runs every side once per iteration, in an order rotated each iteration (so none always follows
 * another), after 5 warm-up iterations; answers each side's samples.
 */
export async function interleaved(n, sides) {
  const names = Object.keys(sides);
  const samples = Object.fromEntries(names.map((k) => [k, { ttft: [], total: [] }]));
  for (let i = -5; i < n; i++) {
    const shift = ((i % names.length) + names.length) % names.length;
    for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
      const r = await sides[name]();
      if (i < 0) continue;
      samples[name].ttft.push(r.ttft ?? r.total);
      samples[name].total.push(r.total);
    }
  }
  return Object.fromEntries(names.map((k) => [k, { ttft: summary(samples[k].ttft), total: summary(samples[k].total) }]));
}

/**
 * One storage mode's server for the entry: a user, three projects (agent, knowledge, mcp), the
 * knowledge project's chunks written as the pipeline writes them (synthetic vectors) into the
 * mode's storage and vector store, the server on the upstream, and the MCP server added.
 */
async function serveMode(mode, { upstream, everything, chunksInKnowledge }) {
  const platform = await mode.openPlatform();
  const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
  const create = async (name) => (await platform.createProject({ userId }, { name, model: 'gpt-bench', provider: 'openai' })).project;
  const [bare, project, tooled] = [await create('agent'), await create('knowledge'), await create('mcp')];
  await platform.close();
  const { storage, vectors } = await mode.openStores();
  const all = embeddingsLike(chunksInKnowledge, 512, 3);
  const now = new Date();
  for (let d = 0; d < chunksInKnowledge / 100; d++) {
    const documentId = `doc_b${d}`;
    await storage.documents.insert({
      id: documentId,
      userId,
      projectId: project.id,
      fileId: null,
      sourceKey: documentId,
      fileName: `${d}.txt`,
      fileType: 'txt',
      sourceType: 'upload',
      status: 'completed',
      chunkCount: 100,
      vectorCount: 100,
      error: null,
      metadata: {},
      createdAt: now,
      updatedAt: now,
    });
    const chunks = Array.from({ length: 100 }, (_, i) => ({
      id: `chunk_b${d}_${i}`,
      documentId,
      projectId: project.id,
      index: i,
      text: `Paragraph ${i} of document ${d} about topic ${(d * 7 + i) % 50}.`,
      tokenCount: 12,
      metadata: { fileName: `${d}.txt`, fileType: 'txt', chunkIndex: i },
    }));
    await storage.chunks.replaceForDocument(documentId, chunks);
    await vectors.upsert(
      `${project.id}:builtin:use-lite-512`,
      chunks.map((c, i) => ({ id: c.id, documentId, vector: all[d * 100 + i] })),
    );
  }
  await vectors.close();
  await storage.close();

  // The MCP server is a URL a user gives, on loopback: the operator allows its host and port.
  const server = await mode.start({ OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent', AGENT_PLATFORM_ALLOWED_HOSTS: new URL(everything.url).host });
  const headers = { authorization: `Bearer ${key}` };
  const added = await fetch(`${server.url}/api/mcp/add-server`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ projectId: tooled.id, name: 'everything', transport: 'http', url: everything.url }),
  });
  if (!added.ok) throw new Error(`add-server answered ${added.status}: ${await added.text()}`);
  return { mode, server, headers, ours: `${server.url}/api/v1/chat/completions`, ids: { agent: bare.id, knowledge: project.id, mcp: tooled.id } };
}

export async function completionOverhead() {
  const n = Number(process.env.BENCH_COMPLETIONS ?? 200);
  const chunksInKnowledge = Number(process.env.BENCH_AGENT_CHUNKS ?? 10_000);
  return withStorageModes('completions', async (modes) => {
    const upstream = await startBenchUpstream({ words: 20, toolSuffix: '__echo' });
    const slow = await startBenchUpstream({ words: 10, delayMs: 20 });
    const everything = await startHttpEverything();
    const mcpClient = new Client({ name: 'bench-direct', version: '0.0.0' }, { capabilities: {} });
    const embedder = builtinEmbedder({ workers: 1 });
    const served = [];
    let floor;
    try {
      for (const mode of modes) served.push(await serveMode(mode, { upstream, everything, chunksInKnowledge }));
      floor = await startChild('proxy-floor', upstream.url);
      await mcpClient.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
      const question = 'What does topic 12 say?';
      const ask = { messages: [{ role: 'user', content: question }], stream: true };
      const echoTool = { type: 'function', function: { name: 'mcp__everything__echo', parameters: { type: 'object' } } };

      const timed = async (fn) => {
        const t = performance.now();
        await fn();
        return { total: performance.now() - t };
      };
      // Through the service: four sides per mode, named `plain` ... with one mode, `SQLite plain` ... with both.
      const label = (s, side) => (served.length === 1 ? side : `${s.mode.label} ${side}`);
      const through = Object.fromEntries(
        served.flatMap((s) => [
          [label(s, 'plain'), () => streamOnce(s.ours, s.headers, { model: 'gpt-bench', ...ask })],
          [label(s, 'agent'), () => streamOnce(s.ours, s.headers, { model: s.ids.agent, ...ask })],
          [label(s, 'knowledge'), () => streamOnce(s.ours, s.headers, { model: s.ids.knowledge, ...ask })],
          [label(s, 'mcp'), () => streamOnce(s.ours, s.headers, { model: s.ids.mcp, ...ask })],
        ]),
      );
      const sides = await interleaved(n, {
        direct: () => streamOnce(`${upstream.url}/chat/completions`, {}, { model: 'gpt-bench', ...ask }),
        directToolCall: () => streamOnce(`${upstream.url}/chat/completions`, {}, { model: 'gpt-bench', ...ask, tools: [echoTool] }),
        directEcho: () => timed(() => mcpClient.callTool({ name: 'echo', arguments: { message: 'bench' } })),
        embedding: () => timed(() => embedder.embed([question])),
        proxyFloor: () => streamOnce(`${floor.url}/v1/chat/completions`, {}, { model: 'gpt-bench', ...ask }),
        ...through,
      });
      for (const s of served) {
        s.stopped = true;
        await s.server.stop();
      }
      await floor.stop();
      floor = undefined;

      // Buffering check, on the first mode (streaming does not touch storage): the upstream sends a chunk every 20 ms.
      const slowServer = await modes[0].start({ OPENAI_BASE_URL: slow.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' });
      const gaps = [];
      for (let i = 0; i < 10; i++) {
        const r = await streamOnce(`${slowServer.url}/api/v1/chat/completions`, served[0].headers, { model: 'gpt-bench', ...ask });
        for (let j = 1; j < r.arrivals.length; j++) gaps.push(r.arrivals[j] - r.arrivals[j - 1]);
      }
      await slowServer.stop();

      const ttft = (k) => sides[k].ttft.p50;
      const added = (s) => ({
        plain: round(ttft(label(s, 'plain')) - ttft('direct')),
        agent: round(ttft(label(s, 'agent')) - ttft('direct')),
        knowledgeMinusEmbedding: round(ttft(label(s, 'knowledge')) - ttft('direct') - sides.embedding.total.p50),
        mcpRound: round(ttft(label(s, 'mcp')) - ttft(label(s, 'agent')) - sides.directEcho.total.p50 - sides.directToolCall.total.p50),
      });
      return {
        name: `chat completion overhead (ms, ${n} sequential streaming requests per side, interleaved; ${modes.map((m) => m.label).join(' and ')})`,
        sides,
        // One mode: as before BENCH_STORAGE; both: per mode.
        addedTtftP50: {
          proxyFloor: round(ttft('proxyFloor') - ttft('direct')),
          ...(served.length === 1 ? added(served[0]) : Object.fromEntries(served.map((s) => [s.mode.label, added(s)]))),
        },
        targets: { agent: 3, knowledgeMinusEmbedding: 4, mcpRound: 2 },
        streamingGapsMs: { p50: percentile(gaps, 50), min: Math.min(...gaps), max: Math.max(...gaps), upstreamGap: 20 },
      };
    } finally {
      await Promise.all(served.filter((s) => !s.stopped).map((s) => s.server.stop()));
      await floor?.stop();
      await mcpClient.close();
      await embedder.close();
      everything.stop();
      await upstream.close();
      await slow.close();
    }
  });
}
