import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A loopback HTTP server of a fake provider: `127.0.0.1`, a free port. */
export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** Drops the open connections and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts a loopback server that hands each request, its body read whole, to `handle`; a
 * handler that throws gets `fail` (before the answer started) or the connection destroyed.
 */
export async function startLoopback(handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>, fail: (res: ServerResponse, error: unknown) => void): Promise<Loopback> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(parts)).catch((error: unknown) => {
        if (!res.headersSent) fail(res, error);
        else res.destroy();
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** How an exchange ended (`ended`: the answer was written in full, or the client closed first) and whether the client is gone (`closed`). */
export function watchExchange(res: ServerResponse): { readonly ended: Promise<'completed' | 'client_closed'>; closed(): boolean } {
  let closed = false;
  const ended = new Promise<'completed' | 'client_closed'>((resolve) => {
    res.on('close', () => {
      closed = !res.writableFinished;
      resolve(res.writableFinished ? 'completed' : 'client_closed');
    });
  });
  return { ended, closed: () => closed || res.destroyed };
}
