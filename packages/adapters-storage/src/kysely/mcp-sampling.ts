import type { Kysely } from 'kysely';

/**
 * Whether an MCP server may ask the project's model for completions (`sampling/createMessage`):
 * off for every server saved before (SQLite's 0028, PostgreSQL's 0019).
 */
export async function addMcpSampling(db: Kysely<any>, flag: 'integer' | 'boolean'): Promise<void> {
  await db.schema
    .alterTable('mcp_servers')
    .addColumn('allow_sampling', flag, (c) => c.notNull().defaultTo(flag === 'integer' ? 0 : false))
    .execute();
}
