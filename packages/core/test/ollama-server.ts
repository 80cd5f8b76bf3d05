import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A model as Ollama's `GET /api/tags` lists it (digest as bare hex, as Ollama sends it). */
export interface OllamaTag {
  name: string;
  model: string;
  modified_at: string;
  size: number;
  digest: string;
  details: {
    parent_model: string;
    format: string;
    family: string;
    families: string[];
    parameter_size: string;
    quantization_level: string;
  };
}

/** One request the server received. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly host: string | undefined;
  readonly body: string;
}

export interface OllamaTestServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The installed models; change freely. */
  models: OllamaTag[];
  /** When set, `GET /api/tags` answers this status with an Ollama error body. */
  tagsStatus?: number;
  /** When set, `DELETE /api/delete` answers this status with an Ollama error body. */
  deleteStatus?: number;
  /** When set, every answer waits this long (for timeouts). */
  delayMs?: number;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** An Ollama model entry, with a deterministic 64-hex digest derived from the name. */
export function ollamaTag(name: string, size: number, modifiedAt = '2024-05-01T10:00:00.123456789-07:00'): OllamaTag {
  let hex = '';
  for (let i = 0; hex.length < 64; i++) hex += ((name.charCodeAt(i % name.length) * (i + 7)) % 256).toString(16).padStart(2, '0');
  return {
    name,
    model: name,
    modified_at: modifiedAt,
    size,
    digest: hex.slice(0, 64),
    details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
  };
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A stand-in for Ollama on 127.0.0.1 (an ephemeral port) speaking its documented
 * `GET /api/tags` and `DELETE /api/delete` (body `{ model }`, older clients `{ name }`;
 * 200 with no body, 404 `{ error }` when the model is missing).
 */
export async function startOllamaServer(models: OllamaTag[] = []): Promise<OllamaTestServer> {
  const state = { models, requests: [] as RecordedRequest[] } as OllamaTestServer & { models: OllamaTag[] };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      state.requests.push({ method: req.method ?? '', path, host: req.headers.host, body });
      if (state.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      if (res.destroyed) return;
      if (req.method === 'GET' && path === '/api/tags') {
        if (state.tagsStatus !== undefined) return send(res, state.tagsStatus, { error: 'something went wrong' });
        return send(res, 200, { models: state.models });
      }
      if (req.method === 'DELETE' && path === '/api/delete') {
        if (state.deleteStatus !== undefined) return send(res, state.deleteStatus, { error: 'something went wrong' });
        let parsed: { model?: unknown; name?: unknown };
        try {
          parsed = JSON.parse(body) as { model?: unknown; name?: unknown };
        } catch {
          return send(res, 400, { error: 'invalid JSON' });
        }
        const name = typeof parsed.model === 'string' && parsed.model !== '' ? parsed.model : parsed.name;
        if (typeof name !== 'string' || name === '') return send(res, 400, { error: 'model is required' });
        const index = state.models.findIndex((m) => m.name === name);
        if (index < 0) return send(res, 404, { error: `model '${name}' not found` });
        state.models.splice(index, 1);
        return send(res, 200);
      }
      return send(res, 404, { error: 'not found' });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  });
}
