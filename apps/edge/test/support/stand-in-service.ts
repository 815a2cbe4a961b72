import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type StandInHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/**
 * A local HTTP server playing the relay or the account service: records what reached it, counts
 * TCP connections, and answers with a route-specific handler or an echo of the request.
 */
export interface StandInService {
  url: string;
  port: number;
  received: ReceivedRequest[];
  connections: number;
  /** Handler for requests whose path (without query) equals `path`. */
  route(path: string, handler: StandInHandler): void;
  /** Handler for requests whose body should not be read first (streams, slow bodies). */
  rawRoute(path: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  stop(): Promise<void>;
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function echo(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const payload = JSON.stringify({ method: req.method, url: req.url, bodyBytes: body.length });
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(payload);
}

export async function startStandIn(port = 0): Promise<StandInService> {
  const routes = new Map<string, StandInHandler>();
  const rawRoutes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const service: StandInService = {
    url: '',
    port: 0,
    received: [],
    connections: 0,
    route: (path, handler) => routes.set(path, handler),
    rawRoute: (path, handler) => rawRoutes.set(path, handler),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const [path = '/'] = (req.url ?? '/').split('?', 1);
    const raw = rawRoutes.get(path);
    if (raw) {
      service.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.alloc(0) });
      raw(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      service.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      (routes.get(path) ?? echo)(req, res, body);
    });
  });
  // Like our services (runService): keep-alive outlives the edge's pooled-socket idle timeout.
  server.keepAliveTimeout = 65_000;
  server.on('connection', () => {
    service.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  service.port = (server.address() as AddressInfo).port;
  service.url = `http://127.0.0.1:${service.port}`;
  return service;
}

/** A port nothing listens on: bound once by the OS, then released. */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A port whose listener never accepts: a child process listens with a backlog of 1, blocks its
 * event loop, and filler connections take the queue, so the kernel drops further SYNs and a new
 * connection attempt hangs, as with a host that went dark.
 */
export async function startUnacceptingPort(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, [
    '-e',
    `const server = require('node:net').createServer();
     server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
       process.stdout.write(server.address().port + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
     });`,
  ]);
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim()))));
  const fillers = Array.from({ length: 4 }, () => net.connect(port, '127.0.0.1').on('error', () => {}));
  await Promise.all(fillers.map((socket) => new Promise((resolve) => setTimeout(resolve, 200, socket))));
  return {
    port,
    stop: () => {
      for (const socket of fillers) socket.destroy();
      child.kill('SIGKILL');
    },
  };
}
