import express, { type Express } from 'express';
import { pingDatabase, type PrismaClient } from '@modelgate/db';
import type { Logger } from '@modelgate/logger';
import { errorHandler, healthRouter, notFound, requestId } from '@modelgate/http';
import type { Redis } from 'ioredis';

export interface WorkerDeps {
  logger: Logger;
  prisma: PrismaClient;
  redis: Redis;
}

export function createWorkerApp(deps: WorkerDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback, linklocal, uniquelocal');
  app.use(requestId());
  app.use(healthRouter({ database: () => pingDatabase(deps.prisma), redis: () => deps.redis.ping() }));
  app.use(notFound('envelope'));
  app.use(errorHandler(deps.logger, 'envelope'));
  return app;
}
