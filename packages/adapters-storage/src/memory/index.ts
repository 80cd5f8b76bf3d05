import type { StorageAdapter } from '@agent-platform/core';
import { memoryApiKeys } from './api-keys.js';
import { memoryApprovals } from './approvals.js';
import { memoryAudit } from './audit.js';
import { memoryChats } from './chats.js';
import { memoryChunks } from './chunks.js';
import { memoryCredentials } from './credentials.js';
import { memoryDocuments } from './documents.js';
import { memoryFiles } from './files.js';
import { memoryJobs } from './jobs.js';
import { memoryMcpServers } from './mcp-servers.js';
import { memoryProjects } from './projects.js';
import { memoryResponses } from './responses.js';
import { memorySettings } from './settings.js';
import { copyTables, emptyTables, type Tables } from './tables.js';
import { memoryTools } from './tools.js';
import { memoryUsers } from './users.js';

function adapterOver(tables: () => Tables, transaction: StorageAdapter['transaction'], close: () => Promise<void>): StorageAdapter {
  return {
    users: memoryUsers(tables),
    apiKeys: memoryApiKeys(tables),
    projects: memoryProjects(tables),
    documents: memoryDocuments(tables),
    files: memoryFiles(tables),
    chunks: memoryChunks(tables),
    knowledgeSettings: memorySettings(tables),
    jobs: memoryJobs(tables),
    credentials: memoryCredentials(tables),
    chats: memoryChats(tables),
    tools: memoryTools(tables),
    mcpServers: memoryMcpServers(tables),
    approvals: memoryApprovals(tables),
    responses: memoryResponses(tables),
    audit: memoryAudit(tables),
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
  let tables: Tables = emptyTables();
  let queue: Promise<unknown> = Promise.resolve();
  const close = async () => {};

  const transaction: StorageAdapter['transaction'] = (fn) => {
    const run = queue.then(async () => {
      const snapshot = copyTables(tables);
      // Inside a transaction, `transaction` runs in the same one (queueing would deadlock).
      const inner: StorageAdapter = adapterOver(
        () => tables,
        (nested) => nested(tx),
        close,
      );
      // The audit log is not in the snapshot (`copyTables`): the events this transaction
      // appended are taken out one by one when it rolls back.
      const appended: string[] = [];
      const tx: StorageAdapter = {
        ...inner,
        audit: { ...inner.audit, append: (event) => inner.audit.append(event).then(() => void appended.push(event.id)) },
      };
      try {
        return await fn(tx);
      } catch (error) {
        tables = snapshot;
        for (const id of appended) tables.audit.delete(id);
        throw error;
      }
    });
    queue = run.catch(() => {});
    return run;
  };
  const root = adapterOver(() => tables, transaction, close);
  return root;
}
