import express, { type Express } from 'express';
import { pingDatabase, type PrismaClient } from '@modelgate/db';
import type { Logger } from '@modelgate/logger';
import { createServiceMetrics, errorHandler, healthRouter, notFound, requestId, type ServiceMetrics } from '@modelgate/http';
import type { RedisClient } from '@modelgate/queue/connections';

export interface WorkerDeps {
  logger: Logger;
  prisma: PrismaClient;
  redis: RedisClient;
  /** Served on `GET /metrics` (`createWorkerMetrics(queue).service`); without it, HTTP series only. */
  metrics?: ServiceMetrics;
}

export function createWorkerApp(deps: WorkerDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  const metrics = deps.metrics ?? createServiceMetrics('worker');
  app.use(requestId());
  app.use(metrics.middleware);
  // Its one job, crediting queued payments, needs both: jobs come from Redis, credits go to PostgreSQL.
  app.use(healthRouter({ required: { database: () => pingDatabase(deps.prisma), redis: () => deps.redis.ping() } }));
  app.get('/metrics', metrics.handler);
  app.use(notFound('envelope'));
  app.use(errorHandler(deps.logger, 'envelope'));
  return app;
}
