#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { createOutboundPolicy, isPlatformError, type UpstreamLimits } from '@agent-platform/core';
import { parseAllowedHosts } from '@agent-platform/core/internal';
import { parseStdioEntry } from '@agent-platform/mcp';
import { APPROVAL_FLAGS, approvalsFrom } from './approval-flags.js';
import { AUDIT_FLAGS, auditFrom } from './audit-flags.js';
import { listenError, StartError, UsageError } from './cli-usage.js';
import { parseSharedVectorStore } from './deployment.js';
import { DOCUMENT_LIMIT_FLAGS, documentLimitsFrom } from './document-limits.js';
import { keysCommand } from './keys-commands.js';
import { LEASE_FLAGS, type Leases, leasesFrom } from './lease-flags.js';
import { readMcpCommandsFile } from './mcp-commands.js';
import { parsePythonIsolation } from './python-isolation.js';
import { SERVE_HELP } from './serve-help.js';
import { startServer } from './server.js';
import { UPSTREAM_LIMIT_FLAGS, upstreamLimitsFrom } from './upstream-limit-flags.js';
import { AGENT_LIMIT_FLAGS, agentLimitsFrom, USER_CAP_FLAGS, userCapsFrom } from './user-limits.js';

const MAIN_HELP = `Usage: agent-platform <command> [options]

Commands:
  serve          Start the headless API server
  keys create    Create an API key in the data folder (prints its user id)
  keys list      List every user's keys with their user ids (no secrets)

Run "agent-platform <command> --help" for the options of a command.
`;

function integer(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

/** A reader of the output that went away (a pipeline's `head`, a closed terminal) is no reason to stop serving. */
function ignoreGoneReader(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') throw error;
}

async function serveCommand(argv: string[]): Promise<void> {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', ignoreGoneReader);
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      database: { type: 'string' },
      'database-pool': { type: 'string' },
      'vector-store': { type: 'string' },
      'vector-store-config': { type: 'string' },
      'cors-origin': { type: 'string', multiple: true },
      'no-console': { type: 'boolean' },
      'body-limit': { type: 'string' },
      'upload-limit': { type: 'string' },
      'default-model': { type: 'string' },
      'max-steps': { type: 'string' },
      'allow-host': { type: 'string', multiple: true },
      'allowed-hosts-only': { type: 'boolean' },
      'allow-model-downloads': { type: 'boolean' },
      'python-isolation': { type: 'string' },
      'python-packages': { type: 'string', multiple: true },
      'npm-registry': { type: 'string' },
      'tool-queue-per-user': { type: 'string' },
      'tool-queue': { type: 'string' },
      'max-queued-documents-per-user': { type: 'string' },
      'allow-stdio-mcp': { type: 'boolean' },
      'allow-mcp-command': { type: 'string', multiple: true },
      'mcp-commands': { type: 'string', multiple: true },
      'env-key-model': { type: 'string', multiple: true },
      ...Object.fromEntries(
        [...DOCUMENT_LIMIT_FLAGS, ...LEASE_FLAGS, ...USER_CAP_FLAGS, ...AGENT_LIMIT_FLAGS, ...UPSTREAM_LIMIT_FLAGS, ...APPROVAL_FLAGS, ...AUDIT_FLAGS].map((f) => [
          f.flag,
          { type: 'string' as const },
        ]),
      ),
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(SERVE_HELP);
  let documentLimits: ReturnType<typeof documentLimitsFrom>;
  let leases: Leases;
  let userCaps: ReturnType<typeof userCapsFrom>;
  let agentLimits: ReturnType<typeof agentLimitsFrom>;
  let upstreamLimits: UpstreamLimits;
  let approvals: ReturnType<typeof approvalsFrom>;
  let audit: ReturnType<typeof auditFrom>;
  try {
    approvals = approvalsFrom(values, process.env);
    audit = auditFrom(values, process.env);
    documentLimits = documentLimitsFrom(values as Record<string, string | undefined>, process.env);
    leases = leasesFrom(values, process.env);
    userCaps = userCapsFrom(values, process.env);
    agentLimits = agentLimitsFrom(values, process.env);
    upstreamLimits = upstreamLimitsFrom(values, process.env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const isolation = values['python-isolation'] ?? process.env.AGENT_PLATFORM_PYTHON_ISOLATION;
  const npmRegistry = values['npm-registry'];
  if (npmRegistry && !/^https?:\/\//.test(npmRegistry)) throw new UsageError(`--npm-registry must be an http(s) URL, got "${npmRegistry}"`);
  let pythonIsolation: ReturnType<typeof parsePythonIsolation> | undefined;
  try {
    pythonIsolation = isolation ? parsePythonIsolation(isolation) : undefined;
  } catch (error) {
    throw new UsageError(`--python-isolation: ${(error as Error).message}`);
  }
  const uploadLimit = values['upload-limit'] ?? process.env.AGENT_PLATFORM_UPLOAD_LIMIT;
  const defaultModel = values['default-model'] ?? process.env.AGENT_PLATFORM_DEFAULT_MODEL;
  const maxSteps = values['max-steps'] ?? process.env.AGENT_PLATFORM_MAX_STEPS;
  const env = process.env;
  const cors =
    values['cors-origin'] ??
    env.AGENT_PLATFORM_CORS_ORIGINS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const bodyLimit = values['body-limit'] ?? env.AGENT_PLATFORM_BODY_LIMIT;
  const queuePerUser = values['tool-queue-per-user'] ?? env.AGENT_PLATFORM_TOOL_QUEUE_PER_USER;
  const queueTotal = values['tool-queue'] ?? env.AGENT_PLATFORM_TOOL_QUEUE;
  const queuedDocuments = values['max-queued-documents-per-user'] ?? env.AGENT_PLATFORM_MAX_QUEUED_DOCUMENTS_PER_USER;
  // Entries are checked here, so a bad one stops the start with its message.
  const commandLines = [...(values['allow-mcp-command'] ?? []).map(parseStdioEntry), ...(values['mcp-commands'] ?? []).flatMap(readMcpCommandsFile)];
  const vectorStore = parseSharedVectorStore(values['vector-store'] ?? env.AGENT_PLATFORM_VECTOR_STORE, values['vector-store-config'] ?? env.AGENT_PLATFORM_VECTOR_STORE_CONFIG);
  const database = values.database ?? env.AGENT_PLATFORM_DATABASE_URL;
  const databasePool = values['database-pool'];
  const allowedHosts = [...parseAllowedHosts(process.env.AGENT_PLATFORM_ALLOWED_HOSTS), ...(values['allow-host'] ?? [])];
  try {
    createOutboundPolicy({ allowedHosts });
  } catch (error) {
    throw new UsageError(`--allow-host: ${(error as Error).message}`);
  }
  const port = integer(values.port ?? env.PORT ?? '3000', '--port', 0, 65535);
  const host = values.host ?? env.HOST ?? '127.0.0.1';
  const server = await startServer({
    ...(database ? { database } : {}),
    ...(databasePool ? { databasePool: integer(databasePool, '--database-pool', 1, 1000) } : {}),
    ...(vectorStore ? { vectorStore } : {}),
    console: !(values['no-console'] || /^(1|true|yes)$/i.test(env.AGENT_PLATFORM_NO_CONSOLE ?? '')),
    port,
    host,
    dataDir: values.data ?? env.AGENT_PLATFORM_DATA ?? './data',
    ...(cors ? { corsOrigins: cors } : {}),
    ...(bodyLimit ? { bodyLimit: integer(bodyLimit, '--body-limit', 1, 1024 ** 3) } : {}),
    ...(uploadLimit ? { uploadLimit: integer(uploadLimit, '--upload-limit', 1, 1024 ** 3) } : {}),
    ...(defaultModel ? { defaultModel } : {}),
    ...(maxSteps ? { maxSteps: integer(maxSteps, '--max-steps', 1, 100) } : {}),
    documentLimits,
    ...(queuedDocuments ? { maxQueuedDocumentsPerUser: integer(queuedDocuments, '--max-queued-documents-per-user', 1, 1_000_000) } : {}),
    leases,
    userCaps,
    ...(agentLimits.historyTokens !== undefined ? { historyTokens: agentLimits.historyTokens } : {}),
    envKey: agentLimits.envKey,
    images: agentLimits.images,
    upstreamLimits,
    approvals,
    audit,
    outbound: { allowedHosts, allowlistOnly: values['allowed-hosts-only'] === true },
    ...(values['allow-model-downloads'] ? { allowModelDownloads: true } : {}),
    tools: {
      ...(pythonIsolation ? { pythonIsolation } : {}),
      ...(values['python-packages'] ? { pythonPackageDirs: values['python-packages'] } : {}),
      ...(npmRegistry ? { npmRegistry } : {}),
      queue: {
        ...(queuePerUser ? { maxPerOwner: integer(queuePerUser, '--tool-queue-per-user', 1, 100_000) } : {}),
        ...(queueTotal ? { maxTotal: integer(queueTotal, '--tool-queue', 1, 1_000_000) } : {}),
      },
    },
    ...(commandLines.length > 0 ? { mcp: { allowStdio: commandLines } } : values['allow-stdio-mcp'] ? { mcp: { allowStdio: true } } : {}),
  }).catch((error: unknown) => {
    throw listenError(error, port, host);
  });
  if (server.firstKey) {
    process.stdout.write(
      `No API key existed ${database ? 'in this database' : 'in this data folder'}, so one was created for a new user, ${server.firstKeyUserId} (more keys for it: keys create --user ${server.firstKeyUserId} --name NAME). It is shown only once:\n${server.firstKey}\n${LOOPBACK_NOTE}`,
    );
  }
  process.stdout.write(`Agent Platform listening on ${server.url}\n`);
  if (server.consoleUrl) process.stdout.write(`Web console: ${server.consoleUrl}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal} received, shutting down\n`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`Shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Said on the first start: loopback is refused in users' URLs, and how a local model server is allowed. */
const LOOPBACK_NOTE =
  "URLs your users give (a credential's base URL, MCP servers, vector stores, local model addresses) cannot reach this machine's own services (loopback) unless you allow them by port: for a local model server, restart with --allow-host 127.0.0.1:1234 (LM Studio) or --allow-host 127.0.0.1:11434 (Ollama; the server's own OLLAMA_HOST needs nothing).\n";

async function main(argv: string[]): Promise<void> {
  // `pnpm start -- --port 8080` hands the separator through: it carries no meaning here.
  const [command, ...rest] = argv.filter((arg, i) => !(arg === '--' && i <= 2));
  if (command === 'serve') return serveCommand(rest);
  if (command === 'keys') return keysCommand(rest);
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return void process.stdout.write(MAIN_HELP);
  }
  throw new UsageError(`Unknown command "${command}"`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  const message = usage || error instanceof StartError || isPlatformError(error) ? (error as Error).message : String((error as Error).stack ?? error);
  process.stderr.write(`agent-platform: ${message}\n${usage ? 'Run "agent-platform --help" for usage.\n' : ''}`);
  process.exit(usage ? 2 : 1);
});
