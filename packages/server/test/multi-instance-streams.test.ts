import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { postgresDatabase } from '@agent-platform/core/testing';
import { formatCommandLine } from '@agent-platform/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING } from '../../mcp/test/helpers.js';
import { type Cluster, call, contentOf, firstKeyOf, type Instance, SECRET, type SseEvent, sse, startCluster, until } from './multi-instance-helpers.js';

// Three built servers (and a fourth to kill) on one PostgreSQL database: a chat stream written on
// one is followed and resumed on the others, and ended by them when its writer dies; settings,
// credentials and MCP servers changed through one hold on the others at once. The cases run
// side by side on one set of servers (each on its own project, the credential case as its own
// user), to keep the suite's wall time down.

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
// Long enough that a live writer's heartbeat gets through on a loaded 2-core machine (a lapse
// ends a live writer's stream too: that is the lease's contract), short beside the 30 s default.
const STREAM_LEASE_MS = 5000;
const MCP_LINE = formatCommandLine(process.execPath, [EVERYTHING, 'stdio']);

let cluster: Cluster;
let database = '';
let a: Instance;
let b: Instance;
let c: Instance;
/** The instance that writes the stream and is killed. */
let k: Instance;
let key = '';

beforeAll(async () => {
  cluster = await startCluster();
  database = await postgresDatabase();
  // A credential names the fake upstream (a URL a user gives, on loopback): its host and port allowed.
  const args = ['--stream-lease-ms', String(STREAM_LEASE_MS), '--allow-mcp-command', MCP_LINE, '--allow-host', new URL(cluster.upstream.url).host];
  const start = (name: string) => cluster.start(name, cluster.env(name, database, 'streams'), args);
  a = await start('a');
  key = firstKeyOf(a) as string;
  [b, c, k] = await Promise.all([start('b'), start('c'), start('k')]);
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

/** A project of `as` (default the first key's user) whose queries embed through the fake upstream (not the built-in model). */
async function project(name: string, as = key): Promise<string> {
  const created = await call(a, as, 'POST', '/api/projects/create', { name, model: 'chat-model', provider: 'openai' });
  const projectId = created.body.project.id as string;
  expect((await call(a, as, 'PUT', '/api/knowledge/settings', { projectId, settings: { embeddingModel: 'openai:fake-embed' } })).status).toBe(200);
  return projectId;
}

async function chatWithStream(on: Instance, projectId: string): Promise<{ chatId: string; streamId: string }> {
  const chatId = (await call(on, key, 'POST', '/api/chats', { projectId })).body.chat.id as string;
  const created = await call(on, key, 'POST', `/api/chats/${chatId}/streams`, { chatId });
  expect(created.status).toBe(201);
  return { chatId, streamId: created.body.stream.id as string };
}

/** The upstream's one chat request whose last user message is `text`. */
const upstreamCall = (text: string) => {
  const found = cluster.upstream.chats.filter((x) => x.lastUser === text);
  expect(found, text).toHaveLength(1);
  return found[0] as (typeof found)[number];
};

const ids = (events: readonly SseEvent[]) => events.filter((e) => e.id !== undefined).map((e) => e.id as number);

describe('chat streams, settings and MCP servers across instances', () => {
  // First and alone: starting the MCP server process has 10 s (the connector's limit) on a busy machine.
  it('an MCP server connected on B and deleted through A is gone on B: not listed, not offered, its process stopped', async () => {
    const projectId = await project('mcp');
    const added = await call(a, key, 'POST', '/api/mcp/add-server', { projectId, name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const id = added.body.server.id as string;
    const tools = await call(b, key, 'GET', `/api/mcp/servers/${id}/tools`);
    expect(tools.status).toBe(200);
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toContain('echo');
    /** B's stdio MCP children (server-everything processes whose parent is B). */
    const childrenOfB = () =>
      execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('server-everything') && l.trim().split(/\s+/)[1] === String(b.child.pid));
    expect(childrenOfB()).toHaveLength(1);
    const ask = async (text: string) => {
      expect((await call(b, key, 'POST', '/api/v1/chat/completions', { model: projectId, messages: [{ role: 'user', content: text }] })).status).toBe(200);
      return upstreamCall(text).tools;
    };
    expect(await ask('mcp before')).toContain('mcp__everything__echo');

    expect((await call(a, key, 'DELETE', `/api/mcp/servers/${id}`)).status).toBe(200);
    const listed = await call(b, key, 'GET', `/api/mcp/servers?projectId=${projectId}`);
    expect(listed.body.servers).toEqual([]);
    expect((await call(b, key, 'GET', `/api/mcp/servers/${id}/tools`)).status).toBe(404);
    expect((await ask('mcp after')).filter((t) => t.startsWith('mcp__'))).toEqual([]);
    await until('B to stop its MCP process', async () => (childrenOfB().length === 0 ? true : undefined), 10_000);
  }, 120_000);

  it.concurrent('a completion streaming on A is followed from B and resumed from C with Last-Event-ID: nothing lost or repeated', async () => {
    const projectId = await project('streams');
    const { chatId, streamId } = await chatWithStream(a, projectId);
    const path = `/api/chats/${chatId}/streams/${streamId}`;
    let resumed: Promise<SseEvent[]> | undefined;
    // B follows from before the first token; C resumes once B has seen event 5, mid-answer.
    const following = sse(b, key, path, {
      onEvent: (e) => {
        if (e.id === 5) resumed = sse(c, key, path, { headers: { 'last-event-id': '5' } });
      },
    });
    const writing = await sse(a, key, '/api/v1/chat/completions', {
      body: { model: projectId, chatId, streamId, stream: true, messages: [{ role: 'user', content: 'count 40' }] },
    });
    const followed = await following;
    expect(resumed).toBeDefined();
    const rest = await (resumed as Promise<SseEvent[]>);

    const expected = Array.from({ length: 40 }, (_, i) => `w${i + 1} `).join('');
    expect(contentOf(writing)).toBe(expected);
    expect(contentOf(followed)).toBe(expected);
    // The same chunks, in the same order (B's has the usage chunk A's client did not ask for).
    const aChunks = writing.filter((e) => e.data !== '[DONE]').map((e) => e.data);
    const bChunks = followed.filter((e) => e.id !== undefined).map((e) => e.data);
    expect(bChunks.filter((d) => !JSON.parse(d).usage)).toEqual(aChunks);
    const all = ids(followed);
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    expect(rest.filter((e) => e.id !== undefined)).toEqual(followed.filter((e) => e.id !== undefined && e.id > 5));
    expect(followed.at(-1)?.data).toBe('[DONE]');
    expect(rest.at(-1)?.data).toBe('[DONE]');
    // The turn is stored once, whoever reads it.
    const messages = await call(c, key, 'GET', `/api/chats/${chatId}/messages`);
    expect(messages.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'count 40'],
      ['assistant', expected],
    ]);
  }, 120_000);

  it.concurrent("a stream whose writing instance is killed ends on B's follower with an error event within the lease; the chat takes a new stream", async () => {
    const projectId = await project('killed writer');
    const { chatId, streamId } = await chatWithStream(b, projectId);
    const path = `/api/chats/${chatId}/streams/${streamId}`;
    // K writes: three tokens, then the model is silent (held) until K dies.
    void sse(k, key, '/api/v1/chat/completions', {
      body: { model: projectId, chatId, streamId, stream: true, messages: [{ role: 'user', content: 'hold' }] },
    }).catch(() => {}); // K's own client loses its connection when K dies
    let seen = 0;
    const following = sse(b, key, path, {
      onEvent: () => {
        seen++;
      },
    });
    await until('B to follow the first tokens', async () => (seen >= 4 ? true : undefined), 30_000);
    // Silent for longer than the lease: K's heartbeat keeps the stream.
    await new Promise((r) => setTimeout(r, STREAM_LEASE_MS * 1.5));
    expect(seen).toBe(4);
    const killedAt = Date.now();
    k.child.kill('SIGKILL');
    const followed = await following;
    const took = Date.now() - killedAt;
    expect(ids(followed)).toEqual([1, 2, 3, 4, 5]);
    expect(contentOf(followed)).toBe('w1 w2 w3 ');
    const error = JSON.parse(followed.find((e) => e.id === 5)?.data as string) as { error: { code: string; type: string; message: string } };
    expect(error.error.code).toBe('unavailable');
    expect(error.error.message).toMatch(/instance writing this stream stopped/);
    // Within the lease (5 s) and a follower's poll (1 s); loose for a busy machine, below the 30 s default.
    expect(took).toBeLessThan(20_000);
    // A reader coming later gets the same end at once.
    const later = await sse(c, key, path, { headers: { 'last-event-id': '3' } });
    expect(later.filter((e) => e.id !== undefined)).toEqual(followed.filter((e) => e.id !== undefined && e.id > 3));
    // The chat takes a new stream, written and read through other instances.
    const again = await call(c, key, 'POST', `/api/chats/${chatId}/streams`, { chatId });
    expect(again.status).toBe(201);
    const answer = await call(a, key, 'POST', '/api/v1/chat/completions', { model: projectId, chatId, streamId: again.body.stream.id, messages: [{ role: 'user', content: 'count 3' }] });
    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('w1 w2 w3 ');
  }, 120_000);

  it.concurrent('knowledge settings, a project update and a credential changed through A hold on B at once', async () => {
    // Its own user: the credential applies to all the user's openai calls.
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'keys', 'create', '--name', 'settings', '--database', database], {
      env: { PATH: process.env.PATH, AGENT_PLATFORM_SECRET: SECRET, LOG_LEVEL: 'silent' },
    });
    const other = stdout.trimEnd().split('\n').at(-1) as string;
    const projectId = await project('settings', other);
    const ask = async (text: string) => {
      const res = await call(b, other, 'POST', '/api/v1/chat/completions', { model: projectId, messages: [{ role: 'user', content: text }] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return upstreamCall(text);
    };
    expect(await ask('settings 1')).toMatchObject({ instance: 'b', model: 'chat-model', authorization: 'Bearer sk-test' });

    const put = await call(a, other, 'PUT', '/api/knowledge/settings', { projectId, settings: { embeddingModel: 'openai:fake-embed', chunkSize: 321, topK: 7 } });
    expect(put.status).toBe(200);
    const read = await call(b, other, 'GET', `/api/knowledge/settings?projectId=${projectId}`);
    expect(read.body.settings).toMatchObject({ embeddingModel: 'openai:fake-embed', chunkSize: 321, topK: 7 });

    expect((await call(a, other, 'PATCH', `/api/v1/projects/${projectId}`, { model: 'model-two' })).status).toBe(200);
    expect(await ask('settings 2')).toMatchObject({ instance: 'b', model: 'model-two' });

    // B has a client for the environment's key cached; a credential added through A is used at once.
    const credential = await call(a, other, 'POST', '/api/v1/credentials', { name: 'cred', provider: 'openai', apiKey: 'sk-cred-1234', baseUrl: `${cluster.upstream.url}/cred/v1` });
    expect(credential.status).toBe(201);
    expect(await ask('settings 3')).toMatchObject({ instance: 'cred', authorization: 'Bearer sk-cred-1234' });
    // The project uses it as its provider's default: it is not the default any more once A says so.
    expect((await call(a, other, 'PATCH', `/api/v1/credentials/${credential.body.credential.id}`, { data: { default: false } })).status).toBe(200);
    expect(await ask('settings 4')).toMatchObject({ instance: 'b', authorization: 'Bearer sk-test' });
    expect((await call(a, other, 'DELETE', `/api/v1/credentials/${credential.body.credential.id}`)).status).toBe(200);
  }, 120_000);
});
