import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { createKey, keyCall, serveBuilt } from './built-server.js';

// A continuation whose process dies: the built server (real SQLite file, a real JavaScript tool
// in its sandbox marked for approval, the loopback OpenAI fake as the model) claims a paused
// turn when it is approved, runs the call and hangs on the model; it is SIGKILLed and started
// again on the same data folder. Its claim, no longer renewed, holds the turn for the lease
// (a new message is 409), then the next message takes the turn over: the approved call runs
// again (at least once after a crash, docs/AGENT.md "Exactly once") and the turn is stored.

/** The claimer's lease: it renews every third of it (333 ms). */
const LEASE_MS = 1000;
/**
 * The restarted process's lease, by which it judges the dead claim stale: longer than the start
 * of a built server (about 1.2 s here), so its first message lands while the claim still holds.
 */
const RESTART_LEASE_MS = 5000;

let dir = '';
let fake: FakeChatServer;
let key = '';

beforeAll(async () => {
  fake = await startFakeChatServer();
  dir = await mkdtemp(join(tmpdir(), 'ap-claim-crash-'));
  key = await createKey(dir, 'claimer');
});
afterAll(async () => {
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const serve = (leaseMs: number) =>
  serveBuilt(dir, ['--approval-resume-lease-ms', String(leaseMs)], { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '60000' });

const call = (url: string, method: string, path: string, body?: unknown) => keyCall(url, key, method, path, body);

type Sent = { role: string; content?: unknown; tool_call_id?: string };
const sentOf = (i: number) => ((fake.requests[i] as { body: unknown }).body as { messages: Sent[] }).messages;

it('a claimer SIGKILLed mid-continuation holds the turn for the lease; then the next message takes it over, the approved call runs again and the turn is stored', async () => {
  const first = await serve(LEASE_MS);
  const projectId = (await call(first.url, 'POST', '/api/projects/create', { name: 'disks', model: 'gpt-4o-mini', provider: 'openai' })).body.project.id as string;
  const tool = await call(first.url, 'POST', '/api/tools/create', {
    projectId,
    name: 'wipe',
    language: 'javascript',
    // Each run answers a token of its own, so the model's requests show which run they carry.
    code: 'function main(args) { return { wiped: args.disk, run: Math.random().toString(36).slice(2) } }',
    parameters: { type: 'object', properties: { disk: { type: 'string' } } },
    requiresApproval: true,
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  const chatId = (await call(first.url, 'POST', '/api/chats', { projectId })).body.chat.id as string;
  const message = (url: string, content: string) => call(url, 'POST', '/api/v1/chat/completions', { model: projectId, chatId, messages: [{ role: 'user', content }] });

  fake.script({ toolCalls: [{ id: 'call_wipe', name: 'wipe', arguments: { disk: 'd1' } }] });
  const paused = await message(first.url, 'Wipe d1');
  expect(paused.status, JSON.stringify(paused.body)).toBe(200);
  const id = paused.body.approvals[0].id as string;

  // The approval continues the turn: the call runs, then the model never answers.
  fake.script({ hang: true });
  const decision = call(first.url, 'POST', `/api/v1/approvals/${id}`, { decision: 'approve' }).catch((e: unknown) => e);
  while (fake.requests.length < 2) await sleep(20);
  const claimedAt = Date.now();
  const firstRun = sentOf(1).at(-1);
  expect(firstRun).toMatchObject({ role: 'tool', tool_call_id: 'call_wipe' });
  expect(String(firstRun?.content)).toContain('"wiped":"d1"');

  // While its process lives, the claim is renewed past the lease: messages meanwhile are refused.
  while (Date.now() - claimedAt < LEASE_MS * 1.5) {
    const refused = await message(first.url, 'Is it done?');
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    await sleep(150);
  }

  const exited = new Promise((r) => first.child.on('exit', r));
  first.child.kill('SIGKILL');
  await exited;
  const killedAt = Date.now();
  expect(await decision).toBeInstanceOf(Error); // the deciding request lost its server

  const second = await serve(RESTART_LEASE_MS);
  try {
    // Right away, the dead process's claim still holds the turn.
    const held = await message(second.url, 'Is it done?');
    expect(held.status, JSON.stringify(held.body)).toBe(409);
    expect(held.body.message).toContain(`The turn paused in chat ${chatId} is already being continued`);
    expect(held.body.message).toContain('every decision is recorded');
    expect(held.body.details).toMatchObject({ approvals: [id], continuing: true });
    // Nothing of the continuation was stored: the turn is stored only when it completes.
    const before = (await call(second.url, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string }[];
    expect(before.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect((await call(second.url, 'GET', `/api/v1/approvals/${id}`)).body.approval.state).toBe('approved');

    // Once the lease has passed, the next message takes the turn over.
    fake.script({ text: 'Wiped d1, and yes, it is done.' });
    let taken = held;
    while (taken.status === 409) {
      expect(Date.now() - killedAt, JSON.stringify(taken.body)).toBeLessThan(RESTART_LEASE_MS + 20_000);
      await sleep(200);
      taken = await message(second.url, 'Is it done?');
    }
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    // Not before the lease (less the third of the claimer's lease it may have renewed just before dying).
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(RESTART_LEASE_MS - LEASE_MS / 3);
    expect(taken.body.choices[0].message.content).toBe('Wiped d1, and yes, it is done.');

    // The approved call ran again (its own token), before the new message.
    const sent = sentOf(fake.requests.length - 1);
    const secondRun = sent.find((m) => m.role === 'tool' && m.tool_call_id === 'call_wipe');
    expect(String(secondRun?.content)).toContain('"wiped":"d1"');
    expect(secondRun?.content).not.toBe(firstRun?.content);
    expect(sent.slice(-2).map((m) => m.role)).toEqual(['tool', 'user']);
    expect(sent.at(-1)?.content).toBe('Is it done?');
    expect(fake.requests).toHaveLength(3); // the pause, the hung continuation, the takeover

    // Stored once: the one result of the run that completed, the message, the answer.
    const after = (await call(second.url, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string }[];
    expect(after.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(after[2]?.content).toBe(secondRun?.content);
    expect(after.at(-1)?.content).toBe('Wiped d1, and yes, it is done.');
    expect((await call(second.url, 'POST', `/api/v1/approvals/${id}`, { decision: 'approve' })).status).toBe(409);
  } finally {
    const stopped = new Promise((r) => second.child.on('exit', r));
    second.child.kill('SIGTERM');
    await stopped;
  }
}, 120_000);
