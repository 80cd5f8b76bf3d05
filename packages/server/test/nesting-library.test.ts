import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentPlatform, type Caller, isPlatformError } from '@agent-platform/core';
import { MAX_NESTING_DEPTH } from '@agent-platform/core/internal';
import { deepValue } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('every public method that parses input refuses a deep value the same way', async () => {
    const x = () => ({ projectId, x: deep(1_000) }) as never;
    const calls: Record<string, () => Promise<unknown>> = {
      createUserWithKey: () => platform.createUserWithKey(x()),
      createFirstKey: () => platform.createFirstKey(x()),
      createKey: () => platform.createKey(caller, x()),
      createKeyForUser: () => platform.createKeyForUser(caller.userId, x()),
      listKeys: () => platform.listKeys(caller, x()),
      createProject: () => platform.createProject(caller, x()),
      listProjects: () => platform.listProjects(caller, x()),
      updateProject: () => platform.updateProject(caller, projectId, x()),
      createChat: () => platform.createChat(caller, x()),
      listChats: () => platform.listChats(caller, x()),
      renameChat: () => platform.renameChat(caller, 'chat_none', x()),
      createCredential: () => platform.createCredential(caller, x()),
      updateCredential: () => platform.updateCredential(caller, 'cred_none', x()),
      listDefaultModels: () => platform.listDefaultModels(caller, x()),
      createTool: () => platform.createTool(caller, x()),
      listTools: () => platform.listTools(caller, x()),
      updateTool: () => platform.updateTool(caller, toolId, x()),
      activateTool: () => platform.activateTool(caller, toolId, x()),
      runTool: () => platform.runTool(caller, toolId, x()),
      addMcpServer: () => platform.addMcpServer(caller, x()),
      listMcpServers: () => platform.listMcpServers(caller, x()),
      detectMcpTransport: () => platform.detectMcpTransport(caller, x()),
      listLocalModels: () => platform.listLocalModels(caller, x()),
      deleteLocalModel: () => platform.deleteLocalModel(caller, x()),
      chatCompletion: () => platform.chatCompletion(caller, x(), { form: 'v1' }),
      models: () => platform.models(caller, x()),
      createStream: () => platform.createStream(caller, 'chat_none', x()),
      createDocument: () => platform.createDocument(caller, x()),
      createDocumentStream: () => platform.createDocumentStream(caller, x()),
      uploadFiles: () => platform.uploadFiles(caller, x()),
      listDocuments: () => platform.listDocuments(caller, x()),
      listDocumentChunks: () => platform.listDocumentChunks(caller, 'doc_none', x()),
      searchKnowledge: () => platform.searchKnowledge(caller, x()),
      search: () => platform.search(caller, x()),
      reindexKnowledge: () => platform.reindexKnowledge(caller, x()),
      getKnowledgeSettings: () => platform.getKnowledgeSettings(caller, x()),
      putKnowledgeSettings: () => platform.putKnowledgeSettings(caller, x()),
      updateMcpServer: () => platform.updateMcpServer(caller, 'mcp_none', x()),
      listApprovals: () => platform.listApprovals(caller, x()),
      listAuditEvents: () => platform.listAuditEvents(caller, x()),
      decideApproval: () => platform.decideApproval(caller, 'apv_none', x()),
      createResponse: () => platform.createResponse(caller, x()),
      responseInputItems: () => platform.responseInputItems(caller, 'resp_none', x()),
      replayResponse: () => platform.replayResponse(caller, 'resp_none', x()),
      askAgent: () => platform.askAgent(caller, projectId, x()),
      searchAgentKnowledge: () => platform.searchAgentKnowledge(caller, projectId, x()),
    };
    // Every method that parses is in the table: the areas' methods that call parseInput.
    const proto = AgentPlatform.prototype as unknown as Record<string, unknown>;
    const parsing = Object.getOwnPropertyNames(proto).filter((name) => typeof proto[name] === 'function' && String(proto[name]).includes('parseInput'));
    expect(Object.keys(calls).sort()).toEqual(parsing.sort());
    for (const [name, call] of Object.entries(calls)) {
      expect(await refusal(call()), name).toMatchObject({ code: 'invalid_request', message: LIMIT_MESSAGE });
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
