// Child process of bench/run.mjs: starts one server and reports its URL over IPC.
//   node bench/servers.mjs ours <dataDir>     the real server (SQLite, or PostgreSQL mode from the
//                                             AGENT_PLATFORM_DATABASE_URL... env; pino logs to /dev/null;
//                                             AGENT_PLATFORM_ALLOWED_HOSTS as `serve` reads it)
//   node bench/servers.mjs bare <bodyFile>    node:http answering the same bytes
//   node bench/servers.mjs floor <bodyFile>   h3 v2 on srvx (our HTTP stack) answering the same bytes
//   node bench/servers.mjs proxy-floor <url>  h3 v2 on srvx passing chat completions to <url> as they are

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [kind, arg] = process.argv.slice(2);

if (kind === 'ours') {
  const { startServer } = await import('@agent-platform/server');
  const { parseAllowedHosts } = await import('@agent-platform/core/internal');
  const { default: pino } = await import('pino');
  // As `serve` reads it: hosts users' URLs may reach (AGENT_PLATFORM_ALLOWED_HOSTS).
  const allowedHosts = parseAllowedHosts(process.env.AGENT_PLATFORM_ALLOWED_HOSTS);
  // BENCH_DOCUMENT_TIMEOUT_MS: the server's --document-timeout (flags are the CLI's; this is startServer).
  const timeoutMs = Number(process.env.BENCH_DOCUMENT_TIMEOUT_MS);
  const server = await startServer({
    port: 0,
    dataDir: arg,
    logger: pino({ level: 'info' }, pino.destination('/dev/null')),
    ...(allowedHosts.length ? { outbound: { allowedHosts } } : {}),
    ...(timeoutMs > 0 ? { documentLimits: { timeoutMs } } : {}),
  });
  process.send({ url: server.url, firstKey: server.firstKey });
  process.on('disconnect', () => server.close().then(() => process.exit(0)));
} else if (kind === 'bare') {
  const body = readFileSync(arg);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
  process.on('disconnect', () => server.close(() => process.exit(0)));
} else if (kind === 'floor') {
  const { H3, serve } = await import('h3');
  const body = readFileSync(arg);
  const app = new H3().get('/**', () => new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8' } }));
  const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
  await server.ready();
  process.send({ url: `http://127.0.0.1:${server.node.server.address().port}` });
  process.on('disconnect', () => server.close(true).then(() => process.exit(0)));
} else if (kind === 'proxy-floor') {
  // The least a completion proxy on our stack does: h3 on srvx reads the JSON body, fetch()
  // sends it upstream (arg: the upstream's base URL) and the answer's body is streamed back as
  // it is, with no authentication, storage, parsing of the events or re-encoding.
  const { H3, serve } = await import('h3');
  const app = new H3().post('/v1/chat/completions', async (event) => {
    const body = await event.req.text();
    const upstream = await fetch(`${arg}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return new Response(upstream.body, { status: upstream.status, headers: { 'content-type': 'text/event-stream' } });
  });
  const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
  await server.ready();
  process.send({ url: `http://127.0.0.1:${server.node.server.address().port}` });
  process.on('disconnect', () => server.close(true).then(() => process.exit(0)));
} else {
  throw new Error(`unknown server kind ${kind}`);
}
