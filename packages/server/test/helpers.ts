import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { type RunningServer, type ServerOptions, startServer } from '../src/server.js';

export interface TestServer extends RunningServer {
  /** Keys of two separate users. */
  readonly keyA: string;
  readonly keyB: string;
  readonly dataDir: string;
  call(method: string, path: string, options?: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * The document once its indexing has ended (`completed` or `failed`), polled over HTTP. The
   * first document of a server waits for a reader process to start (seconds on a busy
   * machine), longer than the route's own wait may last.
   */
  indexed(documentId: string, key?: string): Promise<any>;
  stop(): Promise<void>;
}

/** A real server on an ephemeral loopback port over a SQLite file in a temp folder. */
export async function startTestServer(options: Omit<ServerOptions, 'port' | 'host' | 'dataDir'> = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ap-http-'));
  const server = await startServer({ port: 0, host: '127.0.0.1', dataDir, logger: pino({ level: 'silent' }), ...options });
  const keyA = (await server.platform.createUserWithKey({ name: 'a' })).key;
  const keyB = (await server.platform.createUserWithKey({ name: 'b' })).key;
  return {
    ...server,
    keyA,
    keyB,
    dataDir,
    async call(method, path, { key = keyA, body, raw, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (key) (init.headers as Record<string, string>).authorization = `Bearer ${key}`;
      if (raw !== undefined || body !== undefined) {
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
        init.body = raw ?? JSON.stringify(body);
      }
      const res = await fetch(server.url + path, init);
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async indexed(documentId, key = keyA) {
      for (let i = 0; i < 1200; i++) {
        const res = await fetch(`${server.url}/api/knowledge/documents/${documentId}`, { headers: { authorization: `Bearer ${key}` } });
        const { document } = (await res.json()) as { document?: { status: string } };
        if (document && document.status !== 'pending' && document.status !== 'processing') return document;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`document ${documentId} is still being indexed after a minute`);
    },
    async stop() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A hashed bag-of-words vector of `text` (unit length): texts that share words are similar. The
 * embedding of the test embedders, which need no model.
 */
export function bagOfWords(text: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  for (const w of text.toLowerCase().match(/\w+/g) ?? ['_']) {
    const slot = [...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % dimensions;
    v[slot] = (v[slot] as number) + 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
