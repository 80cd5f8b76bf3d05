import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ChromaServer, startChromaServer } from '../../adapters-vector/test/fixtures/chroma-server.js';
import { bagOfWords } from './helpers.js';

// What the multi-instance suites share: the built CLI started as child processes on one
// PostgreSQL database and one real Chroma server, and a fake OpenAI-compatible upstream that
// each instance reaches under its own path (/<instance>/v1), so a test sees which instance
// embedded which text or asked the model what, and can hold one instance's requests unanswered.

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
export const SECRET = 'a-secret-every-instance-shares';
const DIMENSIONS = 32;

/** One chat request the upstream got. */
export interface ChatCall {
  /** The first path segment: the instance (or whatever a credential's baseUrl named). */
  readonly instance: string;
  readonly model: string;
  readonly authorization: string | undefined;
  /** Function names offered to the model. */
  readonly tools: string[];
  readonly lastUser: string;
}

/**
 * The fake upstream. Embeddings: a bag of words. Chat (always streamed, as the server asks):
 * the last user message `count N` answers the tokens `w1 ` .. `wN ` 20 ms apart; `hold` answers
 * `w1 w2 w3 ` and then nothing until `releaseChats()` or the connection closes; anything else `ok`.
 */
export interface Upstream {
  readonly url: string;
  /** Texts embedded and answered, by instance. */
  readonly embedded: Map<string, string[]>;
  /** Embedding requests of these instances are held unanswered (until `release`). */
  readonly held: Set<string>;
  /** Embedding requests held so far, by instance. */
  readonly heldSeen: Map<string, number>;
  readonly chats: ChatCall[];
  /** Answers the held embedding requests of `instance` and stops holding its new ones. */
  release(instance: string): void;
  /** Finishes the chat answers held by `hold`. */
  releaseChats(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function answerChat(req: IncomingMessage, res: ServerResponse, request: any, holds: Set<() => void>): void {
  const messages = request.messages as { role: string; content: unknown }[];
  const lastUser = String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
  const count = /^count (\d+)$/.exec(lastUser);
  const tokens = count ? Array.from({ length: Number(count[1]) }, (_, i) => `w${i + 1} `) : lastUser === 'hold' ? ['w1 ', 'w2 ', 'w3 '] : ['ok'];
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id: 'up', object: 'chat.completion.chunk', created: 1, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  void (async () => {
    chunk({ role: 'assistant', content: '' });
    for (const t of tokens) {
      chunk({ content: t });
      await sleep(20);
    }
    if (lastUser === 'hold') {
      let closed = false;
      await new Promise<void>((resolve) => {
        holds.add(resolve);
        req.socket.once('close', () => {
          closed = true;
          resolve();
        });
      });
      if (closed) return;
    }
    chunk({}, 'stop');
    res.write(
      `data: ${JSON.stringify({ id: 'up', object: 'chat.completion.chunk', created: 1, model: request.model, choices: [], usage: { prompt_tokens: 1, completion_tokens: tokens.length, total_tokens: 1 + tokens.length } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  })();
}

export async function startUpstream(): Promise<Upstream> {
  const embedded = new Map<string, string[]>();
  const held = new Set<string>();
  const heldSeen = new Map<string, number>();
  const heldRequests: { instance: string; res: ServerResponse; answer: () => void }[] = [];
  const chats: ChatCall[] = [];
  const holds = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const instance = req.url?.split('/')[1] ?? '';
      const request = JSON.parse(body);
      if (req.url?.endsWith('/chat/completions')) {
        const messages = request.messages as { role: string; content: unknown }[];
        chats.push({
          instance,
          model: request.model,
          authorization: req.headers.authorization,
          tools: ((request.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name),
          lastUser: String([...messages].reverse().find((m) => m.role === 'user')?.content ?? ''),
        });
        return answerChat(req, res, request, holds);
      }
      const texts: string[] = Array.isArray(request.input) ? request.input : [request.input];
      const answer = () => {
        embedded.set(instance, [...(embedded.get(instance) ?? []), ...texts]);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            object: 'list',
            model: 'fake',
            // The client asks for base64 (little-endian float32) unless told otherwise.
            data: texts.map((t, index) => {
              const vector = bagOfWords(t, DIMENSIONS);
              const embedding = request.encoding_format === 'float' ? [...vector] : Buffer.from(vector.buffer).toString('base64');
              return { object: 'embedding', index, embedding };
            }),
            usage: { prompt_tokens: texts.length, total_tokens: texts.length },
          }),
        );
      };
      if (!held.has(instance)) return answer();
      heldSeen.set(instance, (heldSeen.get(instance) ?? 0) + 1);
      heldRequests.push({ instance, res, answer });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    embedded,
    held,
    heldSeen,
    chats,
    release(instance) {
      held.delete(instance);
      for (const h of heldRequests.filter((r) => r.instance === instance)) {
        heldRequests.splice(heldRequests.indexOf(h), 1);
        h.answer();
      }
    },
    releaseChats() {
      for (const h of [...holds]) h();
      holds.clear();
    },
    async close() {
      for (const { res } of heldRequests) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export interface Instance {
  readonly name: string;
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
}

/** Chroma, the upstream, a temp folder for the instances' data folders, and the instances started: one per suite file. */
export interface Cluster {
  readonly chroma: ChromaServer;
  readonly upstream: Upstream;
  /** The environment of an instance `name` on `database` with the shared Chroma collection `indexName`. */
  env(name: string, database: string, indexName: string): NodeJS.ProcessEnv;
  /** Runs `serve` with `env` (added to a clean environment), resolving when it listens, rejecting with its output when it exits first. */
  start(name: string, env: NodeJS.ProcessEnv, args?: string[]): Promise<Instance>;
  /** Kills what is left and removes everything. */
  stop(): Promise<void>;
}

export async function startCluster(): Promise<Cluster> {
  const root = await mkdtemp(join(tmpdir(), 'ap-multi-'));
  const [chroma, upstream] = await Promise.all([startChromaServer(), startUpstream()]);
  const children: ChildProcess[] = [];
  return {
    chroma,
    upstream,
    env: (name, database, indexName) => ({
      AGENT_PLATFORM_DATABASE_URL: database,
      AGENT_PLATFORM_SECRET: SECRET,
      AGENT_PLATFORM_VECTOR_STORE: 'chroma',
      AGENT_PLATFORM_VECTOR_STORE_CONFIG: JSON.stringify({ endpoint: chroma.url, indexName }),
      OPENAI_BASE_URL: `${upstream.url}/${name}/v1`,
      OPENAI_API_KEY: 'sk-test',
      AGENT_PLATFORM_DOCUMENT_PROCESSES: '1',
      AGENT_PLATFORM_EMBED_WORKERS: '1',
    }),
    start(name, env, args = []) {
      const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', join(root, name), ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', ...env },
      });
      children.push(child);
      let out = '';
      const append = (b: Buffer) => {
        out += b.toString();
      };
      child.stdout?.on('data', append);
      child.stderr?.on('data', append);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out}`)), 60_000);
        child.stdout?.on('data', () => {
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m?.[1]) {
            clearTimeout(timer);
            resolve({ name, child, url: m[1], output: () => out });
          }
        });
        child.on('exit', (code) => {
          clearTimeout(timer);
          reject(Object.assign(new Error(`${name} exited ${code}:\n${out}`), { code, output: out }));
        });
      });
    },
    async stop() {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await upstream.close();
      await chroma.dispose();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export const firstKeyOf = (instance: Instance) =>
  instance
    .output()
    .trimEnd()
    .split('\n')
    .find((l) => l.startsWith('ap_'));

export async function call(instance: Instance, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${instance.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** One SSE event: its id (when sent) and its data. */
export interface SseEvent {
  readonly id?: number;
  readonly data: string;
}

/**
 * Opens an SSE response (a POST with `body`, else a GET, with `headers`) and calls `onEvent` for
 * each event as it arrives; resolves with them all when the stream ends.
 */
export async function sse(instance: Instance, key: string, path: string, options: { body?: unknown; headers?: Record<string, string>; onEvent?: (e: SseEvent, all: SseEvent[]) => void } = {}) {
  const res = await fetch(`${instance.url}${path}`, {
    method: options.body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${key}`, ...(options.body ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(options.body ? { body: JSON.stringify(options.body) } : {}),
  });
  if (!res.ok || !res.body) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  const events: SseEvent[] = [];
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: (\d+)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (data === undefined) continue; // a comment (opening, keep-alive)
      const event = { ...(id ? { id: Number(id) } : {}), data };
      events.push(event);
      options.onEvent?.(event, events);
    }
  }
  return events;
}

/** The content deltas of chunk events, joined (`[DONE]` and error events add nothing). */
export const contentOf = (events: readonly SseEvent[]) =>
  events
    .filter((e) => e.data.startsWith('{'))
    .map((e) => (JSON.parse(e.data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '')
    .join('');

/** The number of vectors in the Chroma collection `name` (Chroma's REST API). */
export async function chromaCount(chroma: ChromaServer, name: string): Promise<number> {
  const base = `${chroma.url}/api/v2/tenants/default_tenant/databases/default_database/collections`;
  const collection = (await (await fetch(`${base}/${name}`)).json()) as { id: string };
  return (await (await fetch(`${base}/${collection.id}/count`)).json()) as number;
}

export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
