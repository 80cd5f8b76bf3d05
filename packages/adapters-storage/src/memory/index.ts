import type {
  ApiKeyRecord,
  ListPosition,
  Page,
  ProjectListQuery,
  ProjectRecord,
  StorageAdapter,
  UserRecord,
} from '@agent-platform/core';

interface Tables {
  users: Map<string, UserRecord>;
  apiKeys: Map<string, ApiKeyRecord>;
  projects: Map<string, ProjectRecord>;
}

const copyTables = (t: Tables): Tables => ({
  users: new Map(t.users),
  apiKeys: new Map(t.apiKeys),
  projects: new Map(t.projects),
});

/** Newest first: createdAt descending, then id descending. */
function compareNewestFirst(a: ListPosition, b: ListPosition): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function insertUnique<T>(map: Map<string, T>, id: string, row: T, what: string): void {
  if (map.has(id)) throw new Error(`${what} ${id} already exists`);
  map.set(id, row);
}

const cloneDates = <T extends object>(row: T): T => {
  const out = { ...row } as Record<string, unknown>;
  for (const [k, v] of Object.entries(out)) if (v instanceof Date) out[k] = new Date(v.getTime());
  return out as T;
};

function paginate(rows: ProjectRecord[], query: ProjectListQuery): Page<ProjectRecord> {
  const word = query.searchWord?.toLowerCase();
  const matching = rows
    .filter((p) => p.userId === query.userId && (!word || p.name.toLowerCase().includes(word)))
    .sort(compareNewestFirst);
  const after = query.after;
  const start = after ? matching.filter((p) => compareNewestFirst(p, after) <= 0).length : (query.offset ?? 0);
  return { items: matching.slice(start, start + query.limit).map(cloneDates), total: matching.length, start };
}

function adapterOver(tables: () => Tables, transaction: StorageAdapter['transaction'], close: () => Promise<void>): StorageAdapter {
  return {
    users: {
      async insert(user) {
        insertUnique(tables().users, user.id, cloneDates(user), 'User');
      },
      async get(id) {
        const user = tables().users.get(id);
        return user && cloneDates(user);
      },
    },
    apiKeys: {
      async insert(key) {
        const t = tables();
        if ([...t.apiKeys.values()].some((k) => k.lookup === key.lookup)) throw new Error('API key lookup already exists');
        insertUnique(t.apiKeys, key.id, cloneDates(key), 'API key');
      },
      async findByLookup(lookup) {
        const key = [...tables().apiKeys.values()].find((k) => k.lookup === lookup);
        return key && cloneDates(key);
      },
      async list(userId) {
        return [...tables().apiKeys.values()].filter((k) => k.userId === userId).sort(compareNewestFirst).map(cloneDates);
      },
      async delete(userId, id) {
        const t = tables();
        if (t.apiKeys.get(id)?.userId !== userId) return false;
        return t.apiKeys.delete(id);
      },
      async touch(id, at) {
        const t = tables();
        const key = t.apiKeys.get(id);
        if (key) t.apiKeys.set(id, { ...key, lastUsedAt: new Date(at.getTime()) });
      },
      async count() {
        return tables().apiKeys.size;
      },
    },
    projects: {
      async insert(project) {
        insertUnique(tables().projects, project.id, cloneDates(project), 'Project');
      },
      async get(userId, id) {
        const project = tables().projects.get(id);
        return project?.userId === userId ? cloneDates(project) : undefined;
      },
      async list(query) {
        return paginate([...tables().projects.values()], query);
      },
      async update(userId, id, patch) {
        const t = tables();
        const project = t.projects.get(id);
        if (project?.userId !== userId) return undefined;
        const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
        const updated = cloneDates({ ...project, ...defined });
        t.projects.set(id, updated);
        return cloneDates(updated);
      },
      async delete(userId, id) {
        const t = tables();
        if (t.projects.get(id)?.userId !== userId) return false;
        return t.projects.delete(id);
      },
    },
    transaction,
    close,
  };
}

/**
 * Storage in process memory: for tests and embedding. Rows are copied in and out, so callers
 * never share objects with the store. Transactions run one at a time over a snapshot that is
 * put back when the function throws.
 */
export function memoryStorage(): StorageAdapter {
  let tables: Tables = { users: new Map(), apiKeys: new Map(), projects: new Map() };
  let queue: Promise<unknown> = Promise.resolve();
  const close = async () => {};

  const transaction: StorageAdapter['transaction'] = (fn) => {
    const run = queue.then(async () => {
      const snapshot = copyTables(tables);
      try {
        return await fn(adapterOver(() => tables, (inner) => inner(root), close));
      } catch (error) {
        tables = snapshot;
        throw error;
      }
    });
    queue = run.catch(() => {});
    return run;
  };
  const root = adapterOver(() => tables, transaction, close);
  return root;
}
