import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@modelgate/logger';
import { answerClientError } from './early-answers';
import { describeError } from './errors';

export type Closer = () => Promise<unknown> | unknown;

/** After the drain deadline, how long the closers get before the process exits anyway. */
const CLOSE_DEPENDENCIES_MS = 5_000;

export interface RunServiceOptions {
  name: string;
  logger: Logger;
  port: number;
  /** Listen address (the service's HOST). */
  host: string;
  /** Released after the HTTP server has drained, in order (e.g. BullMQ worker, Prisma, Redis). */
  closers?: Closer[];
  /** Hard limit on the drain; connections still open then are destroyed. */
  shutdownTimeoutMs: number;
  /** Keep-alive must outlive the edge's idle socket timeout, or the edge reuses dead sockets. */
  keepAliveTimeoutMs?: number;
}

/**
 * Listens with keep-alive settings for our proxies, and answers what Node's parser refuses
 * (oversized URL or headers, malformed requests) in the caller's dialect instead of an empty body.
 * `listener` is an Express app or any other request listener.
 */
export function listen(listener: RequestListener, port: number, host: string, keepAliveTimeoutMs = 65_000): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(listener);
    server.keepAliveTimeout = keepAliveTimeoutMs;
    server.headersTimeout = keepAliveTimeoutMs + 1000;
    server.on('clientError', answerClientError);
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** Stops a listener at once, cutting its open connections (for auxiliary listeners such as metrics). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Listens, then on SIGTERM or SIGINT (or when the `pnpm start` launcher goes away): stops accepting,
 * lets in-flight requests finish (closing idle keep-alive sockets), releases dependencies and exits.
 * More signals during the drain do not cut it (a terminal's Ctrl-C and a supervisor's SIGTERM often
 * both arrive for one stop): only the SHUTDOWN_TIMEOUT_MS deadline ends it early, by closing the
 * connections still open (and exiting 5 s later if a dependency still has not closed); SIGKILL is the
 * way to stop at once.
 */
export async function runService(listener: RequestListener, options: RunServiceOptions): Promise<Server> {
  const { logger, name } = options;
  const server = await listen(listener, options.port, options.host, options.keepAliveTimeoutMs);
  const address = server.address() as AddressInfo;
  logger.info({ port: address.port }, `${name} listening`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.info({ signal }, `${name} is already draining`);
      return;
    }
    stopping = true;
    logger.info({ signal }, `${name} draining`);
    // close() ends only the connections idle at this moment; a kept-alive one that brings another
    // request is served, and told to close after it (idle ones are left to their client: closing
    // them here could cut a request already on its way, which the edge's pool takes care to avoid).
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => res.setHeader('connection', 'close'));
    const force = setTimeout(() => {
      logger.error('drain timed out: closing remaining connections');
      server.closeAllConnections();
    }, options.shutdownTimeoutMs);
    force.unref();
    const abandon = setTimeout(() => {
      logger.error('dependencies did not close in time: exiting');
      logger.flush?.();
      process.exit(1);
    }, options.shutdownTimeoutMs + CLOSE_DEPENDENCIES_MS);
    abandon.unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    clearTimeout(force);
    let exitCode = 0;
    for (const close of options.closers ?? []) {
      try {
        await close();
      } catch (err) {
        exitCode = 1;
        logger.error({ error: describeError(err) }, 'error while closing a dependency');
      }
    }
    logger.info(`${name} stopped`);
    logger.flush?.();
    process.exit(exitCode);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // The launcher starts services with an IPC channel, which closes when it dies, however it died.
  if (process.connected) process.once('disconnect', () => void shutdown('launcher exited'));
  return server;
}
