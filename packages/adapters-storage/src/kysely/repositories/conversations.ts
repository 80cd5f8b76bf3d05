import { PlatformError, type StorageAdapter, type StoredContentPart } from '@agent-platform/core';
import type { Updateable } from 'kysely';
import type { Database } from '../database.js';
import { atomically, deleteLocked, type RepositoryContext } from './context.js';

/** Chats with their messages, tools and MCP servers. */
export function conversationRepositories({ db, dialect, records }: RepositoryContext): Pick<StorageAdapter, 'chats' | 'tools' | 'mcpServers'> {
  const { time, flag } = dialect;
  const { toChat, toMcpServer, toMessage, toTool } = records;
  return {
    chats: {
      async insert(chat) {
        const result = await db
          .insertInto('chats')
          .values({
            id: chat.id,
            user_id: chat.userId,
            project_id: chat.projectId,
            name: chat.name,
            created_at: time(chat.createdAt),
            updated_at: time(chat.updatedAt),
          })
          // The primary key: a chat id is unique per user (another user's of the same id is no conflict).
          .onConflict((oc) => oc.columns(['user_id', 'id']).doNothing())
          .executeTakeFirst();
        if ((result.numInsertedOrUpdatedRows ?? 0n) === 0n) throw new PlatformError('conflict', `Chat ${chat.id} already exists`);
      },
      async get(userId, id) {
        const row = await db.selectFrom('chats').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toChat(row);
      },
      async list(query) {
        let filter = db.selectFrom('chats').where('user_id', '=', query.userId);
        if (query.projectId !== undefined) filter = filter.where('project_id', '=', query.projectId);
        const rows = await filter.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute();
        const { n } = await filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return { items: rows.map(toChat), total: Number(n), start: query.offset };
      },
      async update(userId, id, patch) {
        const set: Updateable<Database['chats']> = { updated_at: time(patch.updatedAt) };
        if (patch.name !== undefined) set.name = patch.name;
        const row = await db.updateTable('chats').set(set).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
        return row && toChat(row);
      },
      delete(userId, id) {
        return deleteLocked(db, dialect, userId, (tx) => tx.deleteFrom('chats').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst());
      },
      async touch(userId, id, at) {
        await db
          .updateTable('chats')
          .set({ updated_at: time(at) })
          .where('user_id', '=', userId)
          .where('id', '=', id)
          .execute();
      },
      async appendMessages(userId, chatId, messages) {
        if (messages.length === 0) return;
        await atomically(db, async (tx) => {
          // Updating the chat's row first locks it (PostgreSQL's row lock, SQLite's write lock):
          // appends to one chat from several instances queue here, and each reads the position
          // after the previous one committed (no duplicate position, no primary key violation).
          await tx
            .updateTable('chats')
            .set((eb) => ({ updated_at: eb.ref('updated_at') }))
            .where('user_id', '=', userId)
            .where('id', '=', chatId)
            .execute();
          const { next } = await tx
            .selectFrom('chat_messages')
            .select((eb) => eb.fn.coalesce(eb.fn.max('position'), eb.val(-1)).as('next'))
            .where('user_id', '=', userId)
            .where('chat_id', '=', chatId)
            .executeTakeFirstOrThrow();
          await tx
            .insertInto('chat_messages')
            .values(
              messages.map((m, i) => ({
                user_id: userId,
                chat_id: chatId,
                position: Number(next) + 1 + i,
                role: m.role,
                content: m.content,
                tool_calls: m.toolCalls === null ? null : JSON.stringify(m.toolCalls),
                tool_call_id: m.toolCallId,
                sources: m.sources?.length ? JSON.stringify(m.sources) : null,
                parts: m.parts?.length ? JSON.stringify(m.parts) : null,
                provider: m.provider ?? null,
                reasoning: m.reasoning?.length ? JSON.stringify(m.reasoning) : null,
                created_at: time(m.createdAt),
              })),
            )
            .execute();
        });
      },
      async messages(userId, chatId) {
        const rows = await db.selectFrom('chat_messages').selectAll().where('user_id', '=', userId).where('chat_id', '=', chatId).orderBy('position').execute();
        return rows.map(toMessage);
      },
      async recentMessages(userId, chatId, { limit, before }) {
        const rows = await db
          .selectFrom('chat_messages')
          .selectAll()
          .where('user_id', '=', userId)
          .where('chat_id', '=', chatId)
          .$if(before !== undefined, (q) => q.where('position', '<', before as number))
          .orderBy('position', 'desc')
          .limit(limit)
          .execute();
        return rows.map(toMessage);
      },
      async imageRefs(userId, scope) {
        // Only the messages that hold images (parts is set on those alone), of one chat or of
        // every chat of the project.
        const rows = await db
          .selectFrom('chat_messages as m')
          .select(['m.chat_id', 'm.parts'])
          .where('m.user_id', '=', userId)
          .where('m.parts', 'is not', null)
          .$if('chatId' in scope, (q) => q.where('m.chat_id', '=', (scope as { chatId: string }).chatId))
          .$if('projectId' in scope, (q) =>
            q.where((eb) =>
              eb.exists(
                eb
                  .selectFrom('chats as c')
                  .select('c.id')
                  .whereRef('c.user_id', '=', 'm.user_id')
                  .whereRef('c.id', '=', 'm.chat_id')
                  .where('c.project_id', '=', (scope as { projectId: string }).projectId),
              ),
            ),
          )
          .execute();
        const seen = new Set<string>();
        return rows.flatMap((row) =>
          ((dialect.readJson(row.parts) ?? []) as readonly StoredContentPart[]).flatMap((p) => {
            const key = `${row.chat_id}\0${p.type === 'image' ? p.ref : ''}`;
            if (p.type !== 'image' || seen.has(key)) return [];
            seen.add(key);
            return [{ chatId: row.chat_id, ref: p.ref }];
          }),
        );
      },
    },
    tools: {
      async insert(t) {
        await db
          .insertInto('tools')
          .values({
            id: t.id,
            user_id: t.userId,
            project_id: t.projectId,
            name: t.name,
            description: t.description,
            language: t.language,
            code: t.code,
            parameters: JSON.stringify(t.parameters),
            dependencies: JSON.stringify(t.dependencies),
            enabled: flag(t.enabled),
            expose_over_mcp: flag(t.exposeOverMcp),
            requires_approval: flag(t.requiresApproval),
            created_at: time(t.createdAt),
            updated_at: time(t.updatedAt),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('tools').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toTool(row);
      },
      async list(query) {
        const filter = db.selectFrom('tools').where('project_id', '=', query.projectId).where('user_id', '=', query.userId);
        const rows = await filter.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute();
        const { n } = await filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return { items: rows.map(toTool), total: Number(n), start: query.offset };
      },
      async enabled(projectId) {
        const rows = await db.selectFrom('tools').selectAll().where('project_id', '=', projectId).where('enabled', '=', flag(true)).orderBy('created_at').orderBy('id').execute();
        return rows.map(toTool);
      },
      async update(userId, id, patch) {
        const set: Updateable<Database['tools']> = { updated_at: time(patch.updatedAt) };
        if (patch.name !== undefined) set.name = patch.name;
        if (patch.description !== undefined) set.description = patch.description;
        if (patch.code !== undefined) set.code = patch.code;
        if (patch.parameters !== undefined) set.parameters = JSON.stringify(patch.parameters);
        if (patch.dependencies !== undefined) set.dependencies = JSON.stringify(patch.dependencies);
        if (patch.enabled !== undefined) set.enabled = flag(patch.enabled);
        if (patch.exposeOverMcp !== undefined) set.expose_over_mcp = flag(patch.exposeOverMcp);
        if (patch.requiresApproval !== undefined) set.requires_approval = flag(patch.requiresApproval);
        const row = await db.updateTable('tools').set(set).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
        return row && toTool(row);
      },
      delete(userId, id) {
        return deleteLocked(db, dialect, userId, (tx) => tx.deleteFrom('tools').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst());
      },
    },
    mcpServers: {
      async insert(m) {
        try {
          await db
            .insertInto('mcp_servers')
            .values({
              id: m.id,
              user_id: m.userId,
              project_id: m.projectId,
              name: m.name,
              transport: m.transport,
              url: m.url,
              command: m.command,
              args: JSON.stringify(m.args),
              header_names: JSON.stringify(m.headerNames),
              env_names: JSON.stringify(m.envNames),
              secrets: m.secrets,
              allow_sampling: dialect.flag(m.allowSampling),
              requires_approval: JSON.stringify(m.requiresApproval),
              created_at: time(m.createdAt),
              updated_at: time(m.updatedAt),
            })
            .execute();
        } catch (error) {
          // The only UNIQUE index of the table is (project_id, name).
          if (dialect.isUniqueViolation(error)) {
            throw new PlatformError('conflict', `An MCP server named "${m.name}" already exists in this project`, { cause: error });
          }
          throw error;
        }
      },
      async get(userId, id) {
        const row = await db.selectFrom('mcp_servers').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toMcpServer(row);
      },
      async list(query) {
        const filter = db.selectFrom('mcp_servers').where('project_id', '=', query.projectId).where('user_id', '=', query.userId);
        const rows = await filter.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute();
        const { n } = await filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return { items: rows.map(toMcpServer), total: Number(n), start: query.offset };
      },
      async forProject(projectId) {
        const rows = await db.selectFrom('mcp_servers').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
        return rows.map(toMcpServer);
      },
      async setRequiresApproval(userId, id, requiresApproval, updatedAt) {
        const row = await db
          .updateTable('mcp_servers')
          .set({ requires_approval: JSON.stringify(requiresApproval), updated_at: time(updatedAt) })
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .returningAll()
          .executeTakeFirst();
        return row && toMcpServer(row);
      },
      delete(userId, id) {
        return deleteLocked(db, dialect, userId, (tx) => tx.deleteFrom('mcp_servers').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst());
      },
    },
  };
}
