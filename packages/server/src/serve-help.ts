/** `agent-platform serve --help`: every flag with its env variable and default (the README lists the same). */
import { SHARED_VECTOR_STORES } from './deployment.js';
export const SERVE_HELP = `Usage: agent-platform serve [--port 3000] [--host 127.0.0.1] [--data ./data] [--cors-origin ORIGIN]...

Starts the headless API server on SQLite storage under the data folder, or on a PostgreSQL
database shared by several instances (--database). When there is no API key yet, one is
created and printed once (by one instance, when several start together).

Options:
  --port PORT           Port to listen on (env PORT, default 3000; 0 picks a free port)
  --host HOST           Address to bind (env HOST, default 127.0.0.1)
  --data DIR            Data folder (env AGENT_PLATFORM_DATA, default ./data)
  --database URL        postgres://USER:PASSWORD@HOST:PORT/DATABASE: storage, uploaded files,
                        posted texts and the indexing queue in this PostgreSQL database, shared
                        by any number of instances (env AGENT_PLATFORM_DATABASE_URL; default:
                        SQLite in the data folder). Needs AGENT_PLATFORM_SECRET (the same on
                        every instance) and --vector-store; see docs/DEPLOY.md
  --database-pool N     Most storage connections of this instance to --database, 1 to 1000
                        (env AGENT_PLATFORM_DATABASE_POOL, default 10; the notifier holds 2
                        more): keep the sum over instances under PostgreSQL's max_connections
  --vector-store NAME   Vector store of projects that name none, one of
                        ${SHARED_VECTOR_STORES.join(', ')} (env AGENT_PLATFORM_VECTOR_STORE;
                        default: the built-in store in the data folder, refused with --database)
  --vector-store-config JSON
                        Its configuration, the keys of a project's vectorStoreConfig, e.g.
                        '{"endpoint":"http://10.0.0.5:8000","indexName":"agents"}'
                        (env AGENT_PLATFORM_VECTOR_STORE_CONFIG)
  --no-console          Serve the API only: no web console at /console/ and no redirect of /
                        (env AGENT_PLATFORM_NO_CONSOLE=true; default: the console is served)
  --cors-origin ORIGIN  Allow browser calls from ORIGIN; repeatable; "*" for any (env AGENT_PLATFORM_CORS_ORIGINS, comma-separated; default none)
  --body-limit BYTES    Largest JSON request body (env AGENT_PLATFORM_BODY_LIMIT, default 1048576)
  --upload-limit BYTES  Largest body of document and file uploads (env AGENT_PLATFORM_UPLOAD_LIMIT, default 16777216)
  --max-image-bytes BYTES  Largest image of a completion's messages, decoded (env AGENT_PLATFORM_MAX_IMAGE_BYTES, default 5242880)
  --max-request-image-bytes BYTES  A completion's images together (env AGENT_PLATFORM_MAX_REQUEST_IMAGE_BYTES, default 20971520)
  --default-model P:M   Model of completions that name none, as provider:model (env AGENT_PLATFORM_DEFAULT_MODEL, default openai:gpt-4o-mini)
  --max-steps N         Model calls per agent turn at most (env AGENT_PLATFORM_MAX_STEPS, default 8)
  --allow-host HOST[:PORT]
                        Let URLs that callers supply (local model baseUrl, a credential's baseUrl,
                        MCP servers, vector store endpoints) reach this host name (*.domain for
                        subdomains), IP or CIDR range besides public addresses: loopback and
                        private ones are refused otherwise. With :PORT only that port of it
                        (IPv6 as [::1]:PORT), e.g. 127.0.0.1:1234 for LM Studio or
                        127.0.0.1:11434 for users' own Ollama credentials; without, every port.
                        Repeatable (env AGENT_PLATFORM_ALLOWED_HOSTS, comma- or space-separated)
  --allowed-hosts-only  Only allow-listed hosts are reachable (public ones too are refused)
  --allow-model-downloads
                        Let projects name Hugging Face hub models (embeddingModel "hf:<owner>/<name>")
                        that are not in <data>/models/hub yet: the server downloads them (from
                        HF_ENDPOINT, default https://huggingface.co) (env
                        AGENT_PLATFORM_ALLOW_MODEL_DOWNLOADS=true; default: only models already there)
  --python-isolation MODE
                        Confinement of Python tools: auto (default: namespaces when the machine
                        can make them, else Python tools are refused), namespaces, or process
                        (in-process guards only; weaker) (env AGENT_PLATFORM_PYTHON_ISOLATION)
  --python-packages DIR Folder of extra Python wheels tools may declare; repeatable
                        (env AGENT_PLATFORM_PYTHON_PACKAGES, comma-separated)
  --npm-registry URL    Registry of JavaScript tools' npm dependencies
                        (env AGENT_PLATFORM_NPM_REGISTRY, default https://registry.npmjs.org/)
  --tool-queue-per-user N
                        Tool runs of one user waiting for a sandbox at most, per language; one
                        more answers 429 (env AGENT_PLATFORM_TOOL_QUEUE_PER_USER, default 64)
  --tool-queue N        Tool runs of all users waiting for a sandbox at most, per language
                        (env AGENT_PLATFORM_TOOL_QUEUE, default 1024)
  --allow-stdio-mcp     Let callers add stdio MCP servers with ANY command, arguments and env:
                        this lets every API user run anything on this machine as the server's
                        user (env AGENT_PLATFORM_ALLOW_STDIO_MCP=true; default: refused)
  --allow-mcp-command LINE
                        Allow stdio MCP servers running exactly this command line: the command
                        and all its arguments, split like a shell does (no expansion), e.g.
                        "npx -y @modelcontextprotocol/server-everything"; or a JSON object
                        {"command":"node","args":["server.js"],"env":["API_KEY"]} that also names
                        the env keys a caller may set (default none); repeatable
                        (env AGENT_PLATFORM_MCP_COMMANDS, a JSON array of such entries)
  --mcp-commands FILE   Allowed command lines, one entry per line as for --allow-mcp-command
                        (# comments); repeatable (env AGENT_PLATFORM_MCP_COMMANDS_FILE)
  --history-tokens N    Token budget of a model call's messages with a chat: the system context
                        and the request's messages are always sent, the chat's earlier turns
                        fill the rest, newest first (env AGENT_PLATFORM_HISTORY_TOKENS, default 32000)
  --env-key-max-tokens N
                        Most max_tokens of an openai call on the server's own key (OPENAI_API_KEY:
                        the user has no credential), sent when a request asks none; more is
                        refused; 0 for no cap (env AGENT_PLATFORM_ENV_KEY_MAX_TOKENS, default 4096)
  --env-key-model NAME  The only models openai calls on the server's own key may use; repeatable
                        (env AGENT_PLATFORM_ENV_KEY_MODELS, comma-separated; default any)

What one user may have at most; one more is refused with 429 naming the flag:
  --max-keys-per-user N         API keys (env AGENT_PLATFORM_MAX_KEYS_PER_USER, default 1000)
  --max-projects-per-user N     Projects (env AGENT_PLATFORM_MAX_PROJECTS_PER_USER, default 10000)
  --max-credentials-per-user N  Credentials (env AGENT_PLATFORM_MAX_CREDENTIALS_PER_USER, default 1000)
  --max-chats-per-user N        Chats (env AGENT_PLATFORM_MAX_CHATS_PER_USER, default 10000)
  --max-tools-per-user N        Tools (env AGENT_PLATFORM_MAX_TOOLS_PER_USER, default 10000)
  --max-mcp-servers-per-user N  MCP servers (env AGENT_PLATFORM_MAX_MCP_SERVERS_PER_USER, default 1000)
  --max-documents-per-user N    Documents (env AGENT_PLATFORM_MAX_DOCUMENTS_PER_USER, default 100000)
  --max-messages-per-user N     Chat messages, all chats together
                                (env AGENT_PLATFORM_MAX_MESSAGES_PER_USER, default 1000000)

How soon work of an instance that stopped passes to the others (holders renew every third):
  --job-lease-ms MS     Lease of a claimed indexing job; after it another instance takes the job
                        over (env AGENT_PLATFORM_JOB_LEASE_MS, 300 to 3600000, default 30000)
  --job-poll-ms MS      How often an instance with free slots looks for indexing jobs it was not
                        woken for (env AGENT_PLATFORM_JOB_POLL_MS, 10 to 600000, default 1000)
  --stream-lease-ms MS  With --database: lease of a chat stream's writer; a stream whose instance
                        stopped ends with an error event this long after its last write
                        (env AGENT_PLATFORM_STREAM_LEASE_MS, 300 to 3600000, default 30000)

Tool calls a person approves, and questions of MCP servers (docs/AGENT.md, "Approvals"):
  --approval-ttl-ms MS  How long a tool call waits for approval; undecided, it is denied
                        (env AGENT_PLATFORM_APPROVAL_TTL_MS, 1000 to 2592000000, default 86400000)
  --elicitation-timeout-ms MS
                        How long an MCP server's question waits for an answer; unanswered, it is
                        declined (env AGENT_PLATFORM_ELICITATION_TIMEOUT_MS, 1000 to 86400000,
                        default 600000)
  --approval-resume-lease-ms MS
                        How long the claim of a paused turn's continuation holds unrenewed: a
                        continuation whose process died frees the turn this long after
                        (env AGENT_PLATFORM_APPROVAL_RESUME_LEASE_MS, 1000 to 3600000, default 60000)

The audit log (docs/AUDIT.md): who changed what, when and from where:
  --audit-retention-days DAYS
                        How long an event is kept; older ones are deleted hourly by every
                        instance; 0 keeps every event (env AGENT_PLATFORM_AUDIT_RETENTION_DAYS,
                        0 to 36500, default 365)

Indexing is shared fairly between users (docs/KNOWLEDGE.md, "The job queue"):
  --max-queued-documents-per-user N
                        Documents one user may have waiting or being indexed; one more document,
                        upload or re-index answers 429 and writes nothing
                        (env AGENT_PLATFORM_MAX_QUEUED_DOCUMENTS_PER_USER, default 1000)

Documents are parsed and chunked in child processes; one over a limit fails naming it:
  --document-timeout MS Time to parse and chunk one document, then its process is killed
                        (env AGENT_PLATFORM_DOCUMENT_TIMEOUT_MS, default 60000)
  --document-memory MB  Memory of each document process (resident and heap)
                        (env AGENT_PLATFORM_DOCUMENT_MEMORY_MB, default 1024)
  --max-document-pages N
                        Most pages of a PDF (env AGENT_PLATFORM_MAX_DOCUMENT_PAGES, default 2000)
  --max-document-unzipped BYTES
                        Most bytes unpacked from a DOCX, checked before and while inflating
                        (env AGENT_PLATFORM_MAX_DOCUMENT_UNZIPPED, default 67108864)
  --max-document-nesting N
                        Deepest nesting of HTML elements and DOCX XML
                        (env AGENT_PLATFORM_MAX_DOCUMENT_NESTING, default 512)
  --max-document-chars N
                        Most characters of text read from one document
                        (env AGENT_PLATFORM_MAX_DOCUMENT_CHARS, default 33554432)
  --max-document-chunks N
                        Most chunks of one document (env AGENT_PLATFORM_MAX_DOCUMENT_CHUNKS, default 20000)

What upstreams (model, MCP and embedding servers, the local runtime, vector stores) send back is
read under these bounds; past one the upstream is cut off and the call fails naming the flag:
  --max-model-answer BYTES
                        One answer of a model server: a body that is not streamed, one event of
                        a streamed answer, and the text and tool calls it adds up to
                        (env AGENT_PLATFORM_MAX_MODEL_ANSWER, default 4194304)
  --max-message BYTES   One message an agent turn stores: the model's text and tool calls of one
                        step, one tool's result (env AGENT_PLATFORM_MAX_MESSAGE, default 1048576)
  --max-mcp-message BYTES
                        One JSON-RPC message of an MCP server (a body, one event), and one
                        server's whole tool list (env AGENT_PLATFORM_MAX_MCP_MESSAGE, default 4194304)
  --max-mcp-tool-result BYTES
                        The result of one MCP tool call
                        (env AGENT_PLATFORM_MAX_MCP_TOOL_RESULT, default 1048576)
  --max-runtime-answer BYTES
                        One answer of the local model runtime (its model list)
                        (env AGENT_PLATFORM_MAX_RUNTIME_ANSWER, default 1048576)
  --max-vector-answer BYTES
                        One answer of a third-party vector store
                        (env AGENT_PLATFORM_MAX_VECTOR_ANSWER, default 16777216)
  --max-embeddings-answer BYTES
                        One answer of an embedding server (a batch of vectors)
                        (env AGENT_PLATFORM_MAX_EMBEDDINGS_ANSWER, default 16777216)
  -h, --help            Show this help

Env LOG_LEVEL sets the request log level (default info; "silent" for none).
Env AGENT_PLATFORM_TOOL_TIMEOUT_MS bounds each tool run (default 5000),
AGENT_PLATFORM_TOOL_VALIDATION_TIMEOUT_MS each check of tool arguments against their schema
(default 1000), AGENT_PLATFORM_MCP_TIMEOUT_MS each MCP tool call (default 30000).
Env AGENT_PLATFORM_SECRET is the master key of stored credentials (default: a key file in
the data folder; required with --database). Providers without a stored credential use OPENAI_API_KEY, OPENAI_BASE_URL
and OLLAMA_HOST; AGENT_PLATFORM_MODEL_TIMEOUT_MS bounds each provider request (120000).
Credentials with proxy: true go through HTTPS_PROXY / HTTP_PROXY. The hosts of OPENAI_BASE_URL,
OLLAMA_HOST, the proxies and HF_ENDPOINT are allowed for the server's own requests to them.
Env AGENT_PLATFORM_EMBED_WORKERS sets the most worker threads of the built-in embedder
(default: one per core, at most 4), AGENT_PLATFORM_DOCUMENT_PROCESSES the most document
processes (default 2).
`;
