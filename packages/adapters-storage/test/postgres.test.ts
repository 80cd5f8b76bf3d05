import type { StorageAdapter } from '@agent-platform/core';
import { describeStorageAdapter, describeStreamStore, postgresDatabase, streamStoreOnStorage } from '@agent-platform/core/testing';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStorage } from '../src/postgres/index.js';
import { migrations } from '../src/postgres/schema.js';
import { sqliteStorage } from '../src/sqlite/index.js';
import { expectChatsKeyedByUser, source } from './chats-before-ids.js';

// The conformance suite against a real PostgreSQL server (the test run's private cluster): a new
// database for each test.
const urls = new WeakMap<StorageAdapter, string>();
async function open(connectionString: string) {
  const storage = await postgresStorage({ connectionString });
  urls.set(storage, connectionString);
  return storage;
}

describeStorageAdapter('postgres', {
  create: async () => open(await postgresDatabase()),
  async reopen(storage) {
    await storage.close();
    return open(urls.get(storage) as string);
  },
  share: (storage) => open(urls.get(storage) as string),
});

/**
 * A pool of real connections to `url` that counts: the connections checked out at once (`most`)
 * and the statements sent on them (`statements`), each a round trip to the server.
 */
function countingPool(url: string, max: number) {
  const pool = new pg.Pool({ connectionString: url, max });
  const counts = { out: 0, most: 0, statements: [] as string[] };
  const counting = {
    async connect() {
      const client = await pool.connect();
      counts.out++;
      counts.most = Math.max(counts.most, counts.out);
      // pg gives each checkout its own release function; kysely sends every statement with query().
      const { release, query } = client;
      client.release = (error?: Error | boolean) => {
        counts.out--;
        client.query = query;
        return release.call(client, error);
      };
      client.query = ((text: unknown, ...rest: unknown[]) => {
        counts.statements.push(typeof text === 'string' ? text : String((text as { text?: unknown }).text));
        return (query as (...args: unknown[]) => unknown).call(client, text, ...rest);
      }) as typeof client.query;
      return client;
    },
    end: () => pool.end(),
  };
  return { pool, counting, counts };
}

describe('postgres specifics', () => {
  const at = new Date(0);
  it('reads a document list page and its total at once, on two connections of the pool (one round trip, not two)', async () => {
    const { pool, counting, counts } = countingPool(await postgresDatabase(), 4);
    const storage = await postgresStorage({ pool: counting });
    try {
      await storage.users.insert({ id: 'user_1', createdAt: at });
      // Two idle connections, as a pool in service has (a new one would take longer to open than
      // the other query takes to run).
      await Promise.all([pool.query('select pg_sleep(0.05)'), pool.query('select pg_sleep(0.05)')]);
      counts.most = 0;
      await storage.documents.list({ userId: 'user_1', projectId: 'proj_1', limit: 20, offset: 0 });
      expect(counts.most).toBe(2);
    } finally {
      await storage.close();
      await pool.end();
    }
  });

  it("writes a document's chunks, keyword index entries and vectors in one statement per 500 chunks, replacing its old ones", async () => {
    const { pool, counting, counts } = countingPool(await postgresDatabase(), 2);
    const storage = await postgresStorage({ pool: counting });
    const chunk = (index: number, text: string) => ({
      id: `chunk_${index}`,
      documentId: 'doc_1',
      projectId: 'proj_1',
      index,
      text,
      tokenCount: 3,
      metadata: { chunkIndex: index, note: 'a "quoted" \\ value' },
    });
    const vector = (index: number) => Float32Array.of(index, -index / 3, 0.5);
    try {
      await storage.users.insert({ id: 'user_1', createdAt: at });
      await storage.projects.insert({
        id: 'proj_1',
        userId: 'user_1',
        name: 'p',
        description: '',
        instructions: '',
        icon: '',
        color: '',
        model: 'm',
        provider: 'openai',
        credentialId: null,
        providerOptions: null,
        createdAt: at,
        updatedAt: at,
      });
      await storage.documents.insert({
        id: 'doc_1',
        userId: 'user_1',
        projectId: 'proj_1',
        fileId: null,
        sourceKey: 'doc_1',
        fileName: 'f.txt',
        fileType: 'txt',
        sourceType: 'text',
        status: 'completed',
        chunkCount: 0,
        vectorCount: 0,
        error: null,
        metadata: {},
        createdAt: at,
        updatedAt: at,
      });
      const first = [chunk(0, 'pumps overheat in summer'), chunk(1, 'valves leak')];
      await storage.chunks.replaceForDocument('doc_1', first, { model: 'test:m', vectors: first.map((c) => vector(c.index)) });
      // As indexing writes them: inside a transaction, over the document's earlier chunks, whose
      // ids come again (a chunk id the document had before may be used again).
      const texts = Array.from({ length: 1200 }, (_, i) => (i === 1199 ? 'the last chunk mentions turbines' : `paragraph ${i} about pumps`));
      const next = texts.map((text, i) => chunk(i, text));
      counts.statements = [];
      await storage.transaction((tx) => tx.chunks.replaceForDocument('doc_1', next, { model: 'test:m', vectors: next.map((c) => vector(c.index)) }));
      // begin, 3 statements of at most 500 chunks, commit.
      expect(counts.statements.map((s) => s.trim().split(/\s/)[0])).toEqual(['begin', 'with', 'with', 'with', 'commit']);

      const stored = await storage.chunks.listByDocument('doc_1');
      expect(stored).toEqual(next);
      const vectors = await storage.chunks.embeddingsByText('doc_1', 'test:m');
      expect(vectors.size).toBe(1200);
      expect(vectors.get('the last chunk mentions turbines')).toEqual(vector(1199));
      expect((await storage.chunks.keywordSearch('proj_1', 'turbine', 5)).map((h) => h.id)).toEqual(['chunk_1199']);
      // The old chunks' postings went with them: "valves" was only in the first version.
      expect(await storage.chunks.keywordSearch('proj_1', 'valves', 5)).toEqual([]);
      // The statistics count the new chunks only (N = 1,200), as if indexed once.
      const { rows } = await pool.query('select sum(chunks)::int as n from keyword_stats');
      expect(rows[0].n).toBe(1200);

      // Without vectors, and with none at all: the old rows go, in one statement.
      counts.statements = [];
      await storage.chunks.replaceForDocument('doc_1', []);
      expect(counts.statements.filter((s) => s.trim().startsWith('with'))).toHaveLength(1);
      expect(await storage.chunks.listByDocument('doc_1')).toEqual([]);
      expect((await storage.chunks.embeddingsByText('doc_1', 'test:m')).size).toBe(0);
      expect((await pool.query('select sum(chunks)::int as n from keyword_stats')).rows[0].n).toBe(0);
    } finally {
      await storage.close();
      await pool.end();
    }
  });

  it('migrates once when several instances open the same empty database together', async () => {
    const url = await postgresDatabase();
    const storages = await Promise.all(Array.from({ length: 5 }, () => postgresStorage({ connectionString: url })));
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    try {
      const applied = await db.selectFrom('kysely_migration').select('name').execute();
      expect(applied).toEqual(Object.keys(migrations).map((name) => ({ name })));
      // One schema, usable from every instance.
      await storages[0]?.users.insert({ id: 'user_1', createdAt: new Date(1) });
      for (const s of storages) expect(await s.users.get('user_1')).toEqual({ id: 'user_1', createdAt: new Date(1) });
    } finally {
      await db.destroy();
      await Promise.all(storages.map((s) => s.close()));
    }
  });

  it("migration 0007 makes each user's newest credential of a provider not marked invalid its default, and refuses a second default", async () => {
    const url = await postgresDatabase();
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    try {
      const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0006_stream_leases');
      if (error) throw error;
      await db
        .insertInto('users')
        .values([
          { id: 'user_u', created_at: new Date(1) },
          { id: 'user_v', created_at: new Date(1) },
        ])
        .execute();
      const row = (id: string, userId: string, provider: string, isValid: boolean | null, ms: number) => ({
        id,
        user_id: userId,
        name: id,
        provider,
        secret: 's',
        last4: 'abcd',
        proxy: false,
        is_valid: isValid,
        created_at: new Date(ms),
        updated_at: new Date(ms),
      });
      await db
        .insertInto('credentials')
        .values([
          row('cred_1', 'user_u', 'openai', null, 10),
          row('cred_2', 'user_u', 'openai', true, 20),
          row('cred_3', 'user_u', 'openai', false, 30),
          row('cred_4', 'user_u', 'ollama', null, 40),
          row('cred_5', 'user_u', 'ollama', null, 40),
          row('cred_6', 'user_v', 'openai', false, 50),
        ])
        .execute();
      const storage = await postgresStorage({ connectionString: url });
      try {
        const defaults = async (userId: string) => (await storage.credentials.list(userId)).filter((c) => c.isDefault).map((c) => c.id);
        expect(await defaults('user_u')).toEqual(['cred_5', 'cred_2']);
        expect(await defaults('user_v')).toEqual([]);
      } finally {
        await storage.close();
      }
      await expect(db.updateTable('credentials').set({ is_default: true }).where('id', '=', 'cred_1').execute()).rejects.toMatchObject({ code: '23505', constraint: 'credentials_default' });
    } finally {
      await db.destroy();
    }
  });

  it("migration 0011 keys chats by user and id, keeping every chat and message, and lets another user take an existing chat's id", async () => {
    const url = await postgresDatabase();
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    try {
      const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0009_project_instructions');
      if (error) throw error;
      await db
        .insertInto('users')
        .values([
          { id: 'user_u', created_at: at },
          { id: 'user_v', created_at: at },
        ])
        .execute();
      const project = { model: 'm', provider: 'openai', created_at: at, updated_at: at };
      await db
        .insertInto('projects')
        .values([
          { ...project, id: 'proj_u', user_id: 'user_u', name: 'u' },
          { ...project, id: 'proj_v', user_id: 'user_v', name: 'v' },
        ])
        .execute();
      await db
        .insertInto('chats')
        .values([
          { id: 'my-chat', user_id: 'user_u', project_id: 'proj_u', name: 'Mine', created_at: new Date(1), updated_at: new Date(2) },
          { id: 'chat_v', user_id: 'user_v', project_id: 'proj_v', name: 'Theirs', created_at: at, updated_at: at },
        ])
        .execute();
      const message = (chatId: string, position: number, content: string, sources: unknown = null) => ({
        chat_id: chatId,
        position,
        role: 'user',
        content,
        tool_calls: null,
        tool_call_id: null,
        created_at: at,
        sources: sources === null ? null : JSON.stringify(sources),
      });
      await db
        .insertInto('chat_messages')
        .values([message('my-chat', 0, 'hi'), message('my-chat', 1, 'hello [1]', [source]), message('chat_v', 0, 'yo')])
        .execute();
    } finally {
      await db.destroy();
    }
    const storage = await postgresStorage({ connectionString: url });
    try {
      await expectChatsKeyedByUser(storage);
    } finally {
      await storage.close();
    }
  });

  it('migration 0009 gives every existing project its description as its instructions (it was the system prompt)', async () => {
    const url = await postgresDatabase();
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    try {
      const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0008_message_sources');
      if (error) throw error;
      await db.insertInto('users').values({ id: 'user_u', created_at: at }).execute();
      const row = { user_id: 'user_u', model: 'm', provider: 'openai', created_at: at, updated_at: at };
      await db
        .insertInto('projects')
        .values([
          { ...row, id: 'proj_1', name: 'a', description: 'You answer in French.\nBe brief.' },
          { ...row, id: 'proj_2', name: 'b', description: '' },
        ])
        .execute();
    } finally {
      await db.destroy();
    }
    const storage = await postgresStorage({ connectionString: url });
    try {
      expect(await storage.projects.get('user_u', 'proj_1')).toMatchObject({ description: 'You answer in French.\nBe brief.', instructions: 'You answer in French.\nBe brief.' });
      expect(await storage.projects.get('user_u', 'proj_2')).toMatchObject({ description: '', instructions: '' });
    } finally {
      await storage.close();
    }
  });

  it("migration 0010 gives each queued job its document's user as its tenant, so jobs an older release left are shared fairly", async () => {
    const url = await postgresDatabase();
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    try {
      const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0009_project_instructions');
      if (error) throw error;
      await db
        .insertInto('users')
        .values([
          { id: 'user_a', created_at: at },
          { id: 'user_b', created_at: at },
        ])
        .execute();
      const project = { model: 'm', provider: 'openai', created_at: at, updated_at: at };
      await db
        .insertInto('projects')
        .values([
          { ...project, id: 'proj_a', user_id: 'user_a', name: 'a' },
          { ...project, id: 'proj_b', user_id: 'user_b', name: 'b' },
        ])
        .execute();
      const doc = (id: string, userId: string, projectId: string, ms: number) => ({
        id,
        user_id: userId,
        project_id: projectId,
        source_key: id,
        file_name: `${id}.txt`,
        file_type: 'txt',
        source_type: 'text',
        status: 'pending',
        metadata: '{}',
        created_at: new Date(ms),
        updated_at: new Date(ms),
      });
      await db
        .insertInto('documents')
        .values([doc('doc_a1', 'user_a', 'proj_a', 1), doc('doc_a2', 'user_a', 'proj_a', 2), doc('doc_b1', 'user_b', 'proj_b', 3)])
        .execute();
      const job = (id: string, documentId: string, ms: number) => ({ id, kind: 'index_document', document_id: documentId, payload: '{}', created_at: new Date(ms) });
      await db
        .insertInto('jobs')
        .values([job('job_1', 'doc_a1', 1), job('job_2', 'doc_a2', 2), job('job_3', 'doc_b1', 3)])
        .execute();
    } finally {
      await db.destroy();
    }
    const storage = await postgresStorage({ connectionString: url });
    try {
      expect((await storage.jobs.list()).map((j) => [j.id, j.tenant])).toEqual([
        ['job_1', 'user_a'],
        ['job_2', 'user_a'],
        ['job_3', 'user_b'],
      ]);
      // Fair claims see them: user_a holds a lease, so user_b's younger job comes next.
      expect((await storage.jobs.claim({ owner: 'i', now: new Date(10), leaseMs: 1000 }))?.jobId).toBe('job_1');
      expect((await storage.jobs.claim({ owner: 'i', now: new Date(10), leaseMs: 1000 }))?.jobId).toBe('job_3');
    } finally {
      await storage.close();
    }
  });

  it("migration 0012 counts each user's existing keys, credentials, chats, messages, tools, MCP servers and documents, and keeps counting", async () => {
    const url = await postgresDatabase();
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    try {
      const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0009_project_instructions');
      if (error) throw error;
      const t = { created_at: at, updated_at: at };
      await db
        .insertInto('users')
        .values([
          { id: 'user_u', created_at: at },
          { id: 'user_v', created_at: at },
        ])
        .execute();
      await db
        .insertInto('api_keys')
        .values(['key_1', 'key_2'].map((id) => ({ id, user_id: 'user_u', name: 'k', lookup: `l_${id}`, hash: 'h', created_at: at })))
        .execute();
      await db
        .insertInto('credentials')
        .values({ id: 'cred_1', user_id: 'user_v', name: 'c', provider: 'openai', secret: 's', last4: 'abcd', ...t })
        .execute();
      await db
        .insertInto('projects')
        .values([{ id: 'proj_1', user_id: 'user_u', name: 'p', model: 'm', provider: 'openai', ...t }])
        .execute();
      await db
        .insertInto('chats')
        .values(['chat_1', 'chat_2'].map((id) => ({ id, user_id: 'user_u', project_id: 'proj_1', name: 'c', ...t })))
        .execute();
      await db
        .insertInto('chat_messages')
        .values([0, 1, 2].map((position) => ({ chat_id: 'chat_1', position, role: 'user', content: 'a', created_at: at })))
        .execute();
      await db
        .insertInto('tools')
        .values({ id: 'tool_1', user_id: 'user_u', project_id: 'proj_1', name: 't', description: 'd', language: 'javascript', code: 'x', parameters: '{}', dependencies: '[]', enabled: true, ...t })
        .execute();
      await db
        .insertInto('mcp_servers')
        .values({ id: 'mcp_1', user_id: 'user_u', project_id: 'proj_1', name: 's', transport: 'http', args: '[]', header_names: '[]', env_names: '[]', ...t })
        .execute();
      await db
        .insertInto('documents')
        .values({ id: 'doc_1', user_id: 'user_u', project_id: 'proj_1', source_key: 'doc_1', file_name: 'f', file_type: 'md', source_type: 'upload', status: 'completed', metadata: '{}', ...t })
        .execute();
    } finally {
      await db.destroy();
    }
    const storage = await postgresStorage({ connectionString: url });
    try {
      expect(await storage.users.lockCounts('user_u')).toEqual({ keys: 2, projects: 1, credentials: 0, chats: 2, tools: 1, mcpServers: 1, documents: 1, messages: 3 });
      expect(await storage.users.lockCounts('user_v')).toEqual({ keys: 0, projects: 0, credentials: 1, chats: 0, tools: 0, mcpServers: 0, documents: 0, messages: 0 });
      await storage.projects.delete('user_u', 'proj_1');
      expect(await storage.users.lockCounts('user_u')).toEqual({ keys: 2, projects: 0, credentials: 0, chats: 0, tools: 0, mcpServers: 0, documents: 0, messages: 0 });
    } finally {
      await storage.close();
    }
  });

  const corpus = [
    'The pump overheated and the error code E1234 was shown on the panel',
    'Pump maintenance: every pump is checked monthly and each pump seal replaced yearly',
    'Studies of kinase inhibitors in cancer cells showed reduced growth',
    'An earlier study found that the inhibitor was not effective in mice',
    'Overheating pumps cause seal failures; maintenance schedules prevent them',
    'Café Zürich serves coffee near the lake',
    'Coffee and tea consumption were studied in a cohort of 5000 adults',
    'The and of which were there',
    'Growth factors and kinases regulate cell division in tissue',
    'Monthly checks of the panel found no error codes',
  ];
  const queries = ['pump', 'pump maintenance seal', 'kinase inhibitor study', 'coffee', 'error code panel', 'growth cell', 'the and'];
  const chunks = (d: string, projectId: string, texts: readonly string[]) => texts.map((text, index) => ({ id: `${d}_${index}`, documentId: d, projectId, index, text, tokenCount: 1, metadata: {} }));
  /** Documents doc_1 (proj_a), doc_2 (proj_a) and doc_3 (proj_b); `churn` first indexes and deletes more. */
  async function fill(storage: StorageAdapter, churn = false) {
    await storage.users.insert({ id: 'user_a', createdAt: at });
    for (const p of ['proj_a', 'proj_b']) {
      await storage.projects.insert({
        id: p,
        userId: 'user_a',
        name: p,
        description: '',
        instructions: '',
        icon: '',
        color: '',
        model: 'm',
        provider: 'openai',
        credentialId: null,
        providerOptions: null,
        createdAt: at,
        updatedAt: at,
      });
    }
    const documents = churn ? ['doc_4', 'doc_1', 'doc_2', 'doc_3'] : ['doc_1', 'doc_2', 'doc_3'];
    for (const d of documents) {
      const projectId = d === 'doc_3' ? 'proj_b' : 'proj_a';
      await storage.documents.insert({
        id: d,
        userId: 'user_a',
        projectId,
        fileId: null,
        sourceKey: d,
        fileName: 'f.txt',
        fileType: 'txt',
        sourceType: 'text',
        status: 'completed',
        chunkCount: 0,
        vectorCount: 0,
        error: null,
        metadata: {},
        createdAt: at,
        updatedAt: at,
      });
    }
    if (churn) {
      await storage.chunks.replaceForDocument('doc_4', chunks('doc_4', 'proj_a', corpus));
      await storage.chunks.replaceForDocument('doc_1', chunks('doc_1', 'proj_a', corpus.slice(3)));
    }
    await storage.chunks.replaceForDocument('doc_1', chunks('doc_1', 'proj_a', corpus.slice(0, 5)));
    await storage.chunks.replaceForDocument('doc_2', chunks('doc_2', 'proj_a', corpus.slice(5)));
    await storage.chunks.replaceForDocument('doc_3', chunks('doc_3', 'proj_b', corpus.slice(2, 7)));
    if (churn) await storage.documents.delete('user_a', 'doc_4');
  }
  async function expectSameRanking(actual: StorageAdapter, expected: StorageAdapter) {
    for (const query of queries) {
      for (const project of ['proj_a', 'proj_b']) {
        const want = await expected.chunks.keywordSearch(project, query, 5);
        const got = await actual.chunks.keywordSearch(project, query, 5);
        expect(
          got.map((h) => h.id),
          `${query} in ${project}`,
        ).toEqual(want.map((h) => h.id));
        for (const [i, h] of got.entries()) expect(h.score, `${query} in ${project}`).toBeCloseTo(want[i]?.score as number, 9);
      }
    }
  }

  it('ranks keyword matches as SQLite does: same ids, same BM25 scores, with statistics over all projects', async () => {
    const sqlite = await sqliteStorage({ path: ':memory:' });
    const postgres = await postgresStorage({ connectionString: await postgresDatabase() });
    try {
      await fill(sqlite);
      await fill(postgres);
      expect((await postgres.chunks.keywordSearch('proj_a', 'pump', 10)).length).toBe(3);
      await expectSameRanking(postgres, sqlite);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });

  it('keeps the keyword statistics exact through re-indexing and deletes', async () => {
    const fresh = await postgresStorage({ connectionString: await postgresDatabase() });
    const churned = await postgresStorage({ connectionString: await postgresDatabase() });
    try {
      await fill(fresh);
      await fill(churned, true);
      await expectSameRanking(churned, fresh);
    } finally {
      await fresh.close();
      await churned.close();
    }
  });
});

describeStreamStore('postgres (storageStreamStore)', { create: async (o) => streamStoreOnStorage(await postgresStorage({ connectionString: await postgresDatabase() }), o) });
