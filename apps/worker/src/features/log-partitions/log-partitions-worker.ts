import type { PrismaClient } from '@modelgate/db';
import { describeError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import { createLogPartitionsWorker, type LogPartitionsJob, type RedisClient, type Worker } from '@modelgate/queue';
import { runLogPartitions } from './service';

export interface LogPartitionsWorkerOptions {
  prisma: PrismaClient;
  logger: Logger;
  /** A connection made with `createWorkerConnection`, for this worker alone. */
  connection: RedisClient;
  redisPrefix: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
}

/** Consumes `log-partitions` (scheduled daily and at every worker's start by scheduleLogPartitions). */
export function startLogPartitionsWorker(options: LogPartitionsWorkerOptions): Worker<LogPartitionsJob> {
  const { logger } = options;
  const worker = createLogPartitionsWorker(
    options.connection,
    options.redisPrefix,
    async (job) => {
      try {
        const changes = await runLogPartitions(options.prisma);
        logger.info({ jobId: job.id, ...changes }, 'log partitions maintained');
        return changes;
      } catch (err) {
        logger.warn({ jobId: job.id, attempt: job.attemptsMade + 1, error: describeError(err) }, 'log partitions not maintained');
        throw err;
      }
    },
    { lockDuration: options.lockDurationMs, stalledInterval: options.stalledIntervalMs },
  );
  worker.on('error', (err) => logger.warn({ error: describeError(err) }, 'log-partitions worker error'));
  return worker;
}
