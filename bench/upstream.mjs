// A minimal OpenAI-compatible streaming upstream for the completion bench: every request is
// answered with the same words, one SSE chunk per word (optionally `delayMs` apart), a usage
// chunk and `data: [DONE]`. With `toolSuffix`, a request that offers a function whose name ends
// with it, and whose last message is not a tool result, is answered with one call of that
// function instead (`{"message":"bench"}`): one tool round per turn. It also answers
// `POST .../embeddings` at once with bench/fake-embedder.mjs's bag-of-words vectors, so one base
// URL serves a server's chat model and its embedder (the server takes one OPENAI_BASE_URL).
// (The tests use the full, scriptable fake in packages/server/test/fixtures/openai-upstream.ts.)
import { createServer } from 'node:http';
import { embeddingsAnswer } from './fake-embedder.mjs';

export function startBenchUpstream({ words = 20, delayMs = 0, toolSuffix } = {}) {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', async () => {
      const body = JSON.parse(raw);
      if (req.url.endsWith('/embeddings')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(embeddingsAnswer(body)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: body.model };
      const send = (chunk) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
      const tool = toolSuffix && body.messages.at(-1)?.role !== 'tool' ? body.tools?.find((t) => t.function.name.endsWith(toolSuffix)) : undefined;
      if (tool) {
        const call = { index: 0, id: 'call_bench', type: 'function', function: { name: tool.function.name, arguments: '{"message":"bench"}' } };
        send({ ...base, choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }] });
        send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
        send({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
        res.end('data: [DONE]\n\n');
        return;
      }
      for (let i = 0; i < words; i++) {
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        send({ ...base, choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] });
      }
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      send({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: words, total_tokens: 10 + words } });
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}/v1`, close: () => new Promise((r) => server.close(r)) })));
}
