import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Upstreams that answer too much, on one loopback HTTP server, each under its own path (a base
 * URL to give the platform wherever a user may name an upstream). Every answer is made of one
 * small buffer written again and again (waiting for the socket to drain), so the server itself
 * holds next to nothing however much it sends; it stops when the client closes the connection.
 * "Endless" answers stop at `endlessCapBytes` (default 2 GiB) all the same, so that a platform
 * that does not cut them off fails a test rather than exhausting the machine.
 *
 * Paths (`N`: bytes of the oversized part; `0` for the server's `hugeBytes`):
 * - `/model/json/N/v1`: an OpenAI-compatible model server whose every answer (a completion asked
 *   to stream, `GET /models`) is one `application/json` body of N bytes, on one line.
 * - `/model/stream/v1`: completions answered by an endless event stream of well-formed chunks,
 *   each with 8 KiB of text.
 * - `/model/line/v1`: completions answered by an event stream whose first line never ends.
 * - `/runtime`: an Ollama-style runtime whose `GET /api/tags` is an endless JSON body.
 * - `/mcp/<variant>/N`: a streamable-HTTP MCP server (`initialize` answered normally) whose
 *   `tools/list` (`tools-json`: one JSON body of N bytes; `tools-line`: an event stream whose
 *   data line never ends) or `tools/call` (`result-json`: a text result of N bytes, as JSON)
 *   is too large.
 * - `/mcp-sse/<variant>/N/sse`: the same over the legacy SSE transport: the answers come as
 *   events of the GET stream; `tools-line`: the answer to `tools/list` is a line that never
 *   ends; `result-json`: the answer to `tools/call` is one event of N bytes.
 * - `/vector/N`: a vector store whose every answer is an `application/json` body of N bytes.
 * - `/embed/N/v1`: an OpenAI-compatible embeddings server whose every answer is N bytes of JSON.
 * - `/tattle/STATUS/...`: any upstream whose every request is answered STATUS with a body that
 *   carries {@link TATTLE_MARKER} (as an OpenAI error's message, and in a Qdrant, Chroma, Ollama
 *   or JSON-RPC error's words): what a service a user pointed at would answer, which must never
 *   reach that user.
 */
export interface HostileUpstreams {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Bytes written by every answer so far. */
  sent(): number;
  /** Answers the client closed before their end (the platform cut them off). */
  cut(): number;
  close(): Promise<void>;
}

export interface HostileUpstreamOptions {
  /** Bytes of the oversized part of an answer whose path names none. Default 100 MiB. */
  readonly hugeBytes?: number;
  /** Where an "endless" answer stops anyway. Default 2 GiB. */
  readonly endlessCapBytes?: number;
}

const MiB = 1024 * 1024;

/** What the `/tattle/` upstreams put in every error body: no answer of the platform may contain it. */
export const TATTLE_MARKER = 'another-service-data-7f3a';

/** Resolves at the response's next `drain` or `close`, leaving no listener behind. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
const FILLER = Buffer.alloc(64 * 1024, 'a');
const TOOL = { name: 'dump', description: 'Answers a lot', inputSchema: { type: 'object', properties: {} } };

/**
 * Starts the hostile upstreams (see `HostileUpstreams`).
 *
 * @example
 * const hostile = await startHostileUpstreams();
 * // a credential whose baseUrl is `${hostile.url}/model/json/v1` makes every completion a 100 MiB answer
 */
export async function startHostileUpstreams(options: HostileUpstreamOptions = {}): Promise<HostileUpstreams> {
  const huge = options.hugeBytes ?? 100 * MiB;
  const cap = options.endlessCapBytes ?? 2048 * MiB;
  let sent = 0;
  let cut = 0;
  /** Streams of the legacy SSE sessions, by session id. */
  const sessions = new Map<string, ServerResponse>();
  let nextSession = 0;

  /** Writes `head`, then `bytes` of filler, then `tail`, at the pace the client reads; false when the client went away first. */
  const pour = async (res: ServerResponse, head: string, bytes: number, tail: string): Promise<boolean> => {
    const write = async (chunk: Buffer | string): Promise<boolean> => {
      if (res.destroyed || res.writableEnded) return false;
      sent += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
      if (!res.write(chunk)) {
        await drained(res);
      }
      return !res.destroyed;
    };
    if (!(await write(head))) return false;
    for (let left = bytes; left > 0; left -= FILLER.byteLength) {
      if (!(await write(left >= FILLER.byteLength ? FILLER : FILLER.subarray(0, left)))) {
        cut++;
        return false;
      }
    }
    return write(tail);
  };

  /** A JSON body of about `bytes`: `head`, filler, `tail`. */
  const hugeJson = async (res: ServerResponse, head: string, bytes: number, tail: string, status = 200) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    if (await pour(res, head, bytes, tail)) res.end();
  };

  const readBody = async (req: IncomingMessage): Promise<string> => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    return Buffer.concat(parts).toString('utf8');
  };

  const rpc = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });
  const initialized = (id: unknown, params: { protocolVersion?: string } | undefined) =>
    rpc(id, { protocolVersion: params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1.0.0' } });
  /** The oversized part's opening and closing of a `tools/list` or `tools/call` answer. */
  const oversized = (variant: string, id: unknown): { head: string; tail: string } =>
    variant === 'result-json'
      ? { head: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`, tail: '"}]}}' }
      : { head: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[{"name":"dump","inputSchema":{"type":"object"},"description":"`, tail: '"}]}}' };
  /** Whether a method's answer is the oversized one of `variant`. */
  const isOversized = (variant: string, method: string) => (method === 'tools/list' && variant.startsWith('tools')) || (method === 'tools/call' && variant.startsWith('result'));

  async function streamableMcp(req: IncomingMessage, res: ServerResponse, variant: string, bytes: number): Promise<void> {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const message = JSON.parse(await readBody(req)) as { id?: unknown; method: string; params?: { protocolVersion?: string } };
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    if (message.method === 'initialize') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(initialized(message.id, message.params));
      return;
    }
    if (!isOversized(variant, message.method)) {
      const result = message.method === 'tools/list' ? { tools: [TOOL] } : { content: [{ type: 'text', text: 'ok' }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(rpc(message.id, result));
      return;
    }
    const { head, tail } = oversized(variant, message.id);
    if (variant === 'tools-line') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await pour(res, `event: message\ndata: ${head}`, cap, '');
      res.end();
      return;
    }
    await hugeJson(res, head, bytes, tail);
  }

  async function legacyMcp(req: IncomingMessage, res: ServerResponse, prefix: string, variant: string, bytes: number, rest: string): Promise<void> {
    if (req.method === 'GET' && rest === 'sse') {
      const id = String(++nextSession);
      sessions.set(id, res);
      res.on('close', () => sessions.delete(id));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: endpoint\ndata: ${prefix}/message?session=${id}\n\n`);
      return;
    }
    const session = new URL(req.url ?? '/', 'http://x').searchParams.get('session') ?? '';
    const stream = sessions.get(session);
    if (req.method !== 'POST' || rest !== 'message' || !stream) {
      res.writeHead(404).end();
      return;
    }
    const message = JSON.parse(await readBody(req)) as { id?: unknown; method: string; params?: { protocolVersion?: string } };
    res.writeHead(202).end('Accepted');
    if (message.id === undefined) return;
    if (message.method === 'initialize') {
      stream.write(`event: message\ndata: ${initialized(message.id, message.params)}\n\n`);
      return;
    }
    if (!isOversized(variant, message.method)) {
      const result = message.method === 'tools/list' ? { tools: [TOOL] } : { content: [{ type: 'text', text: 'ok' }] };
      stream.write(`event: message\ndata: ${rpc(message.id, result)}\n\n`);
      return;
    }
    const { head, tail } = oversized(variant, message.id);
    if (variant === 'tools-line') await pour(stream, `event: message\ndata: ${head}`, cap, '');
    else await pour(stream, `event: message\ndata: ${head}`, bytes, `${tail}\n\n`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const parts = path.split('/').filter(Boolean);
    const [kind, variant = '', size = '', ...more] = parts;
    if (req.method === 'POST' && kind !== 'mcp' && kind !== 'mcp-sse') await readBody(req);
    switch (kind) {
      case 'model': {
        if (variant === 'json') {
          const listing = path.endsWith('/models');
          return hugeJson(
            res,
            listing
              ? '{"object":"list","data":[{"object":"model","id":"'
              : '{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"',
            Number(size) || huge,
            listing ? '"}]}' : '"},"finish_reason":"stop"}]}',
          );
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (variant === 'line') {
          await pour(res, 'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"', cap, '');
        } else {
          const text = 'a'.repeat(8192);
          const chunk = Buffer.from(
            `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`,
          );
          for (let written = 0; written < cap && !res.destroyed; written += chunk.byteLength) {
            sent += chunk.byteLength;
            if (!res.write(chunk)) await drained(res);
          }
          if (res.destroyed) cut++;
        }
        res.end();
        return;
      }
      case 'runtime':
        return hugeJson(res, '{"models":[{"name":"', cap, '","modified_at":"2026-01-01T00:00:00Z","size":1,"digest":"00"}]}');
      case 'mcp':
        return streamableMcp(req, res, variant, Number(size) || huge);
      case 'mcp-sse':
        return legacyMcp(req, res, `/${kind}/${variant}/${size}`, variant, Number(size) || huge, more.join('/'));
      case 'vector':
        return hugeJson(res, '{"result":{"status":"green","points":[{"id":"', Number(variant) || huge, '"}]},"status":"ok","time":0}');
      case 'tattle': {
        const words = `${TATTLE_MARKER}: private rows of another service`;
        res.writeHead(Number(variant) || 500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: words, type: 'server_error', code: 'tattle' }, message: words, status: { error: words }, detail: words }));
        return;
      }
      case 'embed':
        return hugeJson(res, '{"object":"list","data":[{"object":"embedding","index":0,"embedding":"', Number(variant) || huge, '"}],"model":"m"}');
      default:
        res.writeHead(404).end();
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    sent: () => sent,
    cut: () => cut,
    close: async () => {
      for (const stream of sessions.values()) stream.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
