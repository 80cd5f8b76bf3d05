import { beforeEach, describe, expect, it } from 'vitest';
import type { McpServerRecord, StorageAdapter } from '../storage/types.js';
import { at, project, type StorageUnderTest } from './storage-rows.js';

/** A project's tools and MCP servers: scoping by user and project, paging, names, cascades, copies. */
export function describeToolsAndMcpServers(suite: StorageUnderTest): void {
  describe('tools', () => {
    let storage: StorageAdapter;
    beforeEach(() => {
      storage = suite.current();
    });

    const tool = (id: string, n: number, overrides: Partial<import('../storage/types.js').ToolRecord> = {}) => ({
      id,
      userId: 'user_a',
      projectId: 'proj_000001',
      name: `tool ${n}`,
      description: 'd',
      language: 'javascript' as const,
      code: 'function main() { return 1 }',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      dependencies: [],
      enabled: true,
      exposeOverMcp: false,
      requiresApproval: false,
      createdAt: at(n),
      updatedAt: at(n),
      ...overrides,
    });

    it('stores tools per project, newest first, enabled ones for the agent, and deletes them with the project', async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.tools.insert(tool('tool_1', 1));
      await storage.tools.insert(tool('tool_2', 2, { enabled: false, dependencies: ['lodash'] }));
      await storage.tools.insert(tool('tool_3', 3));
      expect(await storage.tools.get('user_a', 'tool_2')).toEqual(tool('tool_2', 2, { enabled: false, dependencies: ['lodash'] }));
      expect(await storage.tools.get('user_b', 'tool_2')).toBeUndefined();
      const page = await storage.tools.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 0 });
      expect(page.items.map((t) => t.id)).toEqual(['tool_3', 'tool_2']);
      expect(page.total).toBe(3);
      expect((await storage.tools.enabled('proj_000001')).map((t) => t.id)).toEqual(['tool_1', 'tool_3']);
      const updated = await storage.tools.update('user_a', 'tool_1', { enabled: false, code: 'x', requiresApproval: true, updatedAt: at(9) });
      expect(updated).toMatchObject({ enabled: false, code: 'x', name: 'tool 1', requiresApproval: true, updatedAt: at(9) });
      expect(await storage.tools.get('user_a', 'tool_1')).toMatchObject({ requiresApproval: true });
      expect(await storage.tools.update('user_b', 'tool_1', { name: 'x', updatedAt: at(9) })).toBeUndefined();
      expect(await storage.tools.delete('user_b', 'tool_3')).toBe(false);
      expect(await storage.tools.delete('user_a', 'tool_3')).toBe(true);
      await storage.projects.delete('user_a', 'proj_000001');
      expect(await storage.tools.get('user_a', 'tool_1')).toBeUndefined();
    });

    it("keeps whether a tool is offered on the project's MCP server, and changes it alone", async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.tools.insert(tool('tool_1', 1, { exposeOverMcp: true }));
      await storage.tools.insert(tool('tool_2', 2));
      expect(await storage.tools.get('user_a', 'tool_1')).toEqual(tool('tool_1', 1, { exposeOverMcp: true }));
      expect((await storage.tools.enabled('proj_000001')).map((t) => [t.id, t.exposeOverMcp])).toEqual([
        ['tool_1', true],
        ['tool_2', false],
      ]);
      expect(await storage.tools.update('user_a', 'tool_2', { exposeOverMcp: true, updatedAt: at(9) })).toEqual(tool('tool_2', 2, { exposeOverMcp: true, updatedAt: at(9) }));
      expect(await storage.tools.update('user_a', 'tool_1', { exposeOverMcp: false, updatedAt: at(9) })).toEqual(tool('tool_1', 1, { updatedAt: at(9) }));
      // Another change leaves it as it is.
      expect(await storage.tools.update('user_a', 'tool_2', { name: 'renamed', updatedAt: at(10) })).toMatchObject({ exposeOverMcp: true, name: 'renamed' });
    });
  });

  describe('mcpServers', () => {
    let storage: StorageAdapter;
    const server = (id: string, n: number, overrides: Partial<McpServerRecord> = {}): McpServerRecord => ({
      id,
      userId: 'user_a',
      projectId: 'proj_000001',
      name: `server_${n}`,
      transport: 'http',
      url: `https://mcp${n}.example.com/mcp`,
      command: null,
      args: [],
      headerNames: [],
      envNames: [],
      secrets: null,
      allowSampling: false,
      requiresApproval: false,
      createdAt: at(n),
      updatedAt: at(n),
      ...overrides,
    });
    const stdio = (id: string, n: number, overrides: Partial<McpServerRecord> = {}) =>
      server(id, n, {
        transport: 'stdio',
        url: null,
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp/a b'],
        envNames: ['API_KEY', 'REGION'],
        secrets: 'v1:sealed-env',
        updatedAt: at(n + 50),
        ...overrides,
      });

    beforeEach(async () => {
      storage = suite.current();
      await storage.projects.insert(project('user_a', 1));
      await storage.projects.insert(project('user_a', 2));
      await storage.projects.insert(project('user_b', 3));
    });

    it('round-trips every field and never answers another user', async () => {
      const s1 = stdio('mcp_1', 1);
      const s2 = server('mcp_2', 2, { transport: 'sse', headerNames: ['Authorization', 'X-Team'], secrets: 'v1:sealed-headers' });
      // One that may ask the project's model for completions, and whose named tools wait for approval: both kept.
      const s3 = server('mcp_3', 3, { allowSampling: true, requiresApproval: ['delete_file', 'send mail'] });
      for (const s of [s1, s2, s3]) await storage.mcpServers.insert(s);
      expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(s1);
      expect(await storage.mcpServers.get('user_a', 'mcp_2')).toEqual(s2);
      expect(await storage.mcpServers.get('user_a', 'mcp_3')).toEqual(s3);
      expect(await storage.mcpServers.get('user_a', 'mcp_missing')).toBeUndefined();
      expect(await storage.mcpServers.get('user_b', 'mcp_1')).toBeUndefined();
      expect((await storage.mcpServers.list({ userId: 'user_b', projectId: 'proj_000001', limit: 10, offset: 0 })).total).toBe(0);
      expect(await storage.mcpServers.setRequiresApproval('user_b', 'mcp_1', true, at(9))).toBeUndefined();
      expect(await storage.mcpServers.setRequiresApproval('user_a', 'mcp_2', true, at(9))).toEqual({ ...s2, requiresApproval: true, updatedAt: at(9) });
      expect(await storage.mcpServers.get('user_a', 'mcp_2')).toEqual({ ...s2, requiresApproval: true, updatedAt: at(9) });
      expect(await storage.mcpServers.delete('user_b', 'mcp_1')).toBe(false);
      expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(s1);
      expect(await storage.mcpServers.delete('user_a', 'mcp_1')).toBe(true);
      expect(await storage.mcpServers.delete('user_a', 'mcp_1')).toBe(false);
      expect(await storage.mcpServers.get('user_a', 'mcp_1')).toBeUndefined();
    });

    it("lists a project's servers newest first with paging and total, and all of them oldest first for the agent", async () => {
      for (let n = 1; n <= 5; n++) await storage.mcpServers.insert(server(`mcp_${n}`, n));
      await storage.mcpServers.insert(server('mcp_6', 6, { projectId: 'proj_000002' }));
      await storage.mcpServers.insert(server('mcp_7', 7, { userId: 'user_b', projectId: 'proj_000003' }));
      const first = await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 0 });
      expect(first.items.map((m) => m.id)).toEqual(['mcp_5', 'mcp_4']);
      expect(first.total).toBe(5);
      expect(first.start).toBe(0);
      const last = await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 4 });
      expect(last.items.map((m) => m.id)).toEqual(['mcp_1']);
      expect(last.total).toBe(5);
      expect(last.start).toBe(4);
      expect((await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 10 })).items).toEqual([]);
      expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_1', 'mcp_2', 'mcp_3', 'mcp_4', 'mcp_5']);
      expect(await storage.mcpServers.forProject('proj_000002')).toEqual([server('mcp_6', 6, { projectId: 'proj_000002' })]);
      expect(await storage.mcpServers.forProject('proj_missing')).toEqual([]);
    });

    it('breaks createdAt ties by id in both orders', async () => {
      for (const id of ['mcp_b', 'mcp_c', 'mcp_a']) await storage.mcpServers.insert(server(id, 1, { name: id }));
      const page = await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 });
      expect(page.items.map((m) => m.id)).toEqual(['mcp_c', 'mcp_b', 'mcp_a']);
      expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_a', 'mcp_b', 'mcp_c']);
    });

    it('refuses a duplicate name within a project with conflict, but not across projects', async () => {
      await storage.mcpServers.insert(server('mcp_1', 1, { name: 'github' }));
      await expect(storage.mcpServers.insert(stdio('mcp_2', 2, { name: 'github' }))).rejects.toMatchObject({
        name: 'PlatformError',
        code: 'conflict',
        message: expect.stringContaining('"github"'),
      });
      expect(await storage.mcpServers.get('user_a', 'mcp_2')).toBeUndefined();
      await storage.mcpServers.insert(server('mcp_3', 3, { name: 'github', projectId: 'proj_000002' }));
      await storage.mcpServers.insert(server('mcp_4', 4, { name: 'github', userId: 'user_b', projectId: 'proj_000003' }));
      await storage.mcpServers.insert(server('mcp_5', 5, { name: 'GitHub' }));
      expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_1', 'mcp_5']);
      expect((await storage.mcpServers.forProject('proj_000002')).map((m) => m.id)).toEqual(['mcp_3']);
      // Deleting frees the name.
      expect(await storage.mcpServers.delete('user_a', 'mcp_1')).toBe(true);
      await storage.mcpServers.insert(server('mcp_6', 6, { name: 'github' }));
      expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_5', 'mcp_6']);
    });

    it('deleting a project removes its servers only', async () => {
      await storage.mcpServers.insert(server('mcp_1', 1));
      await storage.mcpServers.insert(stdio('mcp_2', 2));
      await storage.mcpServers.insert(server('mcp_3', 3, { projectId: 'proj_000002' }));
      expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(true);
      expect(await storage.mcpServers.get('user_a', 'mcp_1')).toBeUndefined();
      expect(await storage.mcpServers.get('user_a', 'mcp_2')).toBeUndefined();
      expect(await storage.mcpServers.forProject('proj_000001')).toEqual([]);
      expect((await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 })).total).toBe(0);
      expect(await storage.mcpServers.get('user_a', 'mcp_3')).toEqual(server('mcp_3', 3, { projectId: 'proj_000002' }));
      // A new project can reuse the name.
      await storage.projects.insert(project('user_a', 1));
      await storage.mcpServers.insert(server('mcp_4', 4, { name: 'server_1' }));
      expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_4']);
    });

    it('commits servers in a transaction and leaves nothing of a rolled-back one', async () => {
      await storage.transaction(async (tx) => {
        await tx.mcpServers.insert(server('mcp_1', 1));
      });
      expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(server('mcp_1', 1));

      await expect(
        storage.transaction(async (tx) => {
          await tx.mcpServers.insert(stdio('mcp_2', 2));
          await tx.mcpServers.delete('user_a', 'mcp_1');
          expect(await tx.mcpServers.get('user_a', 'mcp_2')).toEqual(stdio('mcp_2', 2));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await storage.mcpServers.get('user_a', 'mcp_2')).toBeUndefined();
      expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_1']);

      await expect(
        storage.transaction(async (tx) => {
          await tx.mcpServers.insert(server('mcp_3', 3));
          await tx.mcpServers.insert(server('mcp_4', 4, { name: 'server_1' }));
        }),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect(await storage.mcpServers.get('user_a', 'mcp_3')).toBeUndefined();
      expect((await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 })).total).toBe(1);
    });

    it('copies rows in and out', async () => {
      const s = stdio('mcp_1', 1);
      const input = { ...s, args: [...s.args] };
      await storage.mcpServers.insert(input);
      input.args.push('mutated');
      const read = (await storage.mcpServers.get('user_a', 'mcp_1')) as McpServerRecord;
      expect(read).toEqual(s);
      (read.args as string[]).push('mutated');
      expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(s);
    });
  });
}
