import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentPlatform, type Caller, isPlatformError } from '@agent-platform/core';
import { MAX_NESTING_DEPTH } from '@agent-platform/core/internal';
import { deepValue } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes } from '../src/routes.js';
import { openPlatform } from '../src/server.js';

/**
 * The nesting bound for library users: values passed to AgentPlatform methods (no HTTP, no JSON
 * text to scan) deeper than the limit are refused with the same `invalid_request` as the
 * server's, on a real platform (SQLite file, sandboxes), where they used to overflow the stack.
 */

const LIMIT_MESSAGE = `body: nested deeper than ${MAX_NESTING_DEPTH} levels`;

const deep = (depth: number) => deepValue(depth, 'objects') as Record<string, unknown>;

async function refusal(call: Promise<unknown>): Promise<unknown> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isPlatformError(error), String(error)).toBe(true);
  return error;
}

let dir: string;
let platform: AgentPlatform;
let caller: Caller;
let projectId: string;
let toolId: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-nesting-'));
  platform = await openPlatform(dir, { knowledge: true });
  caller = { userId: (await platform.createUserWithKey({ name: 'lib' })).userId };
  projectId = (await platform.createProject(caller, { name: 'deep', model: 'm', provider: 'openai' })).project.id;
  const tool = await platform.createTool(caller, { projectId, name: 'echo', language: 'javascript', code: 'function main(args) { return args; }' });
  toolId = tool.tool.id;
});
afterAll(async () => {
  await platform?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('AgentPlatform refuses values nested deeper than the limit', () => {
  it('the measured cases: settings 100,000 deep, tool parameters 50,000, tool args 5,000', async () => {
    const settings = platform.putKnowledgeSettings(caller, { projectId, settings: { vectorStoreConfig: deep(100_000) } });
    expect(await refusal(settings)).toMatchObject({ code: 'invalid_request', message: LIMIT_MESSAGE });
    const create = platform.createTool(caller, { projectId, name: 'deep', language: 'javascript', code: 'function main() {}', parameters: deep(50_000) });
    expect(await refusal(create)).toMatchObject({ code: 'invalid_request', message: LIMIT_MESSAGE });
    const run = platform.runTool(caller, toolId, { args: deep(5_000) });
    expect(await refusal(run)).toMatchObject({ code: 'invalid_request', message: LIMIT_MESSAGE });
  });

  it('a cyclic value is refused, not walked forever', async () => {
    const args: Record<string, unknown> = {};
    args.self = args;
    expect(await refusal(platform.runTool(caller, toolId, { args }))).toMatchObject({ code: 'invalid_request', message: LIMIT_MESSAGE });
  });

  it('every method behind a route with a body or a query refuses a deep value the same way', async () => {
    const ids: Record<string, string> = { id: toolId, chatId: 'chat_none' };
    for (const route of apiRoutes.filter((r) => r.body || r.query)) {
      const params = Object.fromEntries(Object.keys(route.params?.shape ?? {}).map((name) => [name, ids[name] ?? '']));
      // In-process callers pass objects of any shape, queries included: the handlers are called
      // here with input the server would have refused, to reach the platform's own checks.
      const query = route.query ? { projectId, x: deep(1_000) } : {};
      const input = { caller, params, query, body: route.body ? { projectId, x: deep(1_000) } : undefined, signal: new AbortController().signal, headers: new Headers() };
      const where = `${route.method} ${route.path}`;
      const error = await refusal(route.handler(platform, input));
      expect(error, where).toMatchObject({ code: 'invalid_request', message: LIMIT_MESSAGE });
    }
  });

  it('values exactly at the limit are stored, run and come back whole', async () => {
    await platform.putKnowledgeSettings(caller, { projectId, settings: { vectorStoreConfig: deep(MAX_NESTING_DEPTH - 2) } });
    // A parameters schema nested to the limit: properties of properties of ... (two levels each).
    let parameters: Record<string, unknown> = { type: 'object' };
    for (let level = 3; level <= MAX_NESTING_DEPTH; level += 2) parameters = { type: 'object', properties: { p: parameters } };
    const created = await platform.createTool(caller, { projectId, name: 'nested', language: 'javascript', code: 'function main(args) { return args; }', parameters });
    expect(created.tool.parameters).toEqual(parameters);
    const args = { a: deep(MAX_NESTING_DEPTH - 2) };
    const run = await platform.runTool(caller, toolId, { args });
    expect(run).toMatchObject({ success: true, result: args });
  });
});
