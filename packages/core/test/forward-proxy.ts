import { createServer, request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';

export interface ForwardProxy {
  /** `http://127.0.0.1:<port>` (or the host it listens on). */
  readonly url: string;
  readonly port: number;
  /** What it carried: `CONNECT host:port` for tunnels, `METHOD absolute-url` for plain requests. */
  readonly carried: string[];
  /** TCP connections accepted. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * A forward proxy (CONNECT tunnels and absolute-URI requests) that goes wherever it is asked and
 * counts what it carried: the guard in front of it, not the proxy, must stop refused targets.
 */
export async function startForwardProxy(host = '127.0.0.1', port = 0): Promise<ForwardProxy> {
  const carried: string[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    carried.push(`${req.method} ${req.url}`);
    const target = new URL(req.url as string);
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connection', () => {
    connections++;
  });
  server.on('connect', (req, socket, head) => {
    carried.push(`CONNECT ${req.url}`);
    const at = (req.url as string).lastIndexOf(':');
    const target = connect(Number((req.url as string).slice(at + 1)), (req.url as string).slice(0, at).replace(/^\[|\]$/g, ''), () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      target.write(head);
      target.pipe(socket);
      socket.pipe(target);
    });
    target.on('error', () => socket.destroy());
    socket.on('error', () => target.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${bound}`,
    port: bound,
    carried,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
