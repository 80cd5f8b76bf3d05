import type { Kysely, RawBuilder } from 'kysely';

/**
 * Tools offered on their project's MCP server (SQLite migration 0027, PostgreSQL 0018):
 * `tools.expose_over_mcp`, a flag the owner sets per tool. Existing tools get false: a tool is
 * offered to MCP clients only once its owner says so.
 */
export async function addToolMcpExposure(db: Kysely<any>, type: 'integer' | 'boolean', no: RawBuilder<unknown>): Promise<void> {
  await db.schema
    .alterTable('tools')
    .addColumn('expose_over_mcp', type, (c) => c.notNull().defaultTo(no))
    .execute();
}
