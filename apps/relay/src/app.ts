import { dialectForPath } from '@modelgate/errors';
import { pingDatabase, type PrismaClient } from '@modelgate/db';
import type { Logger } from '@modelgate/logger';
import { errorHandler, healthRouter, notFound, requestId } from '@modelgate/http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { ChannelCache } from './features/channels/channel-cache';
import { completionsRouter } from './features/completions/router';
import { geminiRouter } from './features/gemini/router';
import type { KeyCache } from './features/keys/key-cache';
import { modelsRouter } from './features/models/router';
import { ClientGone, type RelayService } from './features/relay/service';
import { sendUpstreamError, UpstreamHttpError } from './features/relay/upstream-errors';

export interface RelayDeps {
  logger: Logger;
  prisma: PrismaClient;
  redis: Redis;
  keys: KeyCache;
  channels: ChannelCache;
  relay: RelayService;
  maxBodyMb: number;
}

const dialectOf = (req: Request) => dialectForPath(req.path);

/** Upstream answers relayed as they are, vanished clients left alone, the rest in the route's dialect. */
function relayErrors(logger: Logger) {
  const fallback = errorHandler(logger, dialectOf);
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (err instanceof ClientGone) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    if (err instanceof UpstreamHttpError) {
      const dialect = dialectOf(req);
      sendUpstreamError(res, err, dialect === 'google' ? 'google' : 'openai', req.requestId);
      return;
    }
    fallback(err, req, res, next);
  };
}

export function createRelayApp(deps: RelayDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The edge (loopback or private network) sets X-Forwarded-For: the client address for IP allow-lists.
  app.set('trust proxy', 'loopback, linklocal, uniquelocal');
  app.use(requestId());
  app.use(healthRouter({ database: () => pingDatabase(deps.prisma), redis: () => deps.redis.ping() }));
  app.use(completionsRouter(deps.keys, deps.relay, deps.maxBodyMb));
  app.use(geminiRouter(deps.keys, deps.relay, deps.maxBodyMb));
  app.use(modelsRouter(deps.keys, deps.channels));
  app.use(notFound(dialectOf));
  app.use(relayErrors(deps.logger));
  return app;
}
