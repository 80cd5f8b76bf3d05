// One `ask` through a project's MCP server against the same agent's chat completion over HTTP,
// through the real server (child process) on the same loopback upstream (bench/upstream.mjs: 20
// one-word chunks, no delay), sides interleaved request by request in one run:
//   completion  POST /api/v1/chat/completions, model = the project, streamed, read to the end;
//   mcpRaw      one POST of tools/call `ask` (the JSON-RPC message, no SDK client), its event
//               stream read to the end: what the MCP server adds on the wire;
//   mcpClient   the SDK's Client (StreamableHTTPClientTransport), connected once as a host
//               stays connected, calling `ask`: what an MCP host sees.
// Both MCP sides send a progressToken, so progress notifications are part of the cost.
// BENCH_STORAGE (bench/modes.mjs) picks the storage mode (the first one named is used).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { interleaved, round, streamOnce } from './completions.mjs';
import { withStorageModes } from './modes.mjs';
import { startBenchUpstream } from './upstream.mjs';

/** One raw tools/call POST, its stream read to the end; `total` in ms. */
async function rawAsk(url, headers, id) {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask', arguments: { question: 'What does topic 12 say?' }, _meta: { progressToken: id } } }),
  });
  const text = await res.text();
  if (!res.ok || !text.includes('"structuredContent"')) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return { total: performance.now() - t0 };
}

export async function agentMcpAsk() {
  const n = Number(process.env.BENCH_COMPLETIONS ?? 200);
  return withStorageModes('agent-mcp', async ([mode]) => {
    const upstream = await startBenchUpstream({ words: 20 });
    const platform = await mode.openPlatform();
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const { project } = await platform.createProject({ userId }, { name: 'agent', model: 'gpt-bench', provider: 'openai' });
    await platform.close();
    const server = await mode.start({ OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' });
    const headers = { authorization: `Bearer ${key}` };
    const endpoint = `${server.url}/api/v1/projects/${project.id}/mcp`;
    const client = new Client({ name: 'bench', version: '0.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers } }));
      let id = 0;
      const sides = await interleaved(n, {
        completion: () => streamOnce(`${server.url}/api/v1/chat/completions`, headers, { model: project.id, messages: [{ role: 'user', content: 'What does topic 12 say?' }], stream: true }),
        mcpRaw: () => rawAsk(endpoint, headers, ++id),
        mcpClient: async () => {
          const t0 = performance.now();
          const result = await client.callTool({ name: 'ask', arguments: { question: 'What does topic 12 say?' } }, undefined, { onprogress: () => {} });
          if (result.isError) throw new Error(`ask failed: ${JSON.stringify(result.content)}`);
          return { total: performance.now() - t0 };
        },
      });
      const total = (k) => sides[k].total.p50;
      return {
        name: `one ask through the MCP server vs the same completion over HTTP (ms, ${n} sequential requests per side, interleaved; ${mode.label})`,
        sides,
        addedTotalP50: { mcpRaw: round(total('mcpRaw') - total('completion')), mcpClient: round(total('mcpClient') - total('completion')) },
      };
    } finally {
      await client.close().catch(() => {});
      await server.stop();
      await upstream.close();
    }
  });
}
