import { type ConnectionOptions, type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import { z } from 'zod';
import { bullPrefix } from './prefix';

/** Queue names and payloads are defined once here and shared by producers and workers. */
export const MAINTENANCE_QUEUE_NAMES = {
  logPartitions: 'log-partitions',
} as const;

/**
 * Creates the month partitions of `logs` ahead and drops those past LogRetentionDays (docs/api.md
 * 3.4). It reads the clock and the option when it runs, so the job carries nothing.
 */
export const logPartitionsJobSchema = z.object({}).strict();
export type LogPartitionsJob = z.infer<typeof logPartitionsJobSchema>;

/** One job scheduler of this id exists per Redis, however many workers upsert it: one run per period. */
export const LOG_PARTITIONS_SCHEDULER_ID = 'log-partitions-daily';
/** The run at a worker's start; while it waits or runs, another worker's start adds nothing. */
export const LOG_PARTITIONS_START_JOB_ID = 'log-partitions-at-start';
export const LOG_PARTITIONS_EVERY_MS = 24 * 3600 * 1000;

export const LOG_PARTITIONS_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 60_000 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 100 },
  removeOnFail: { age: 30 * 24 * 3600, count: 100 },
} as const;

export function createLogPartitionsQueue(connection: ConnectionOptions, redisPrefix: string): Queue<LogPartitionsJob> {
  return new Queue<LogPartitionsJob>(MAINTENANCE_QUEUE_NAMES.logPartitions, {
    connection,
    prefix: bullPrefix(redisPrefix, connection),
    skipWaitingForReady: true,
    defaultJobOptions: LOG_PARTITIONS_JOB_OPTIONS,
  });
}

/**
 * Schedules the daily run (upserting the same scheduler from every replica leaves one) and queues a
 * run now, under a fixed job id so workers starting together queue it once.
 */
export async function scheduleLogPartitions(queue: Queue<LogPartitionsJob>, everyMs = LOG_PARTITIONS_EVERY_MS): Promise<void> {
  await queue.upsertJobScheduler(LOG_PARTITIONS_SCHEDULER_ID, { every: everyMs }, { name: 'log-partitions', data: {}, opts: LOG_PARTITIONS_JOB_OPTIONS });
  await queue.add('log-partitions', {}, { ...LOG_PARTITIONS_JOB_OPTIONS, jobId: LOG_PARTITIONS_START_JOB_ID, removeOnComplete: true, removeOnFail: true });
}

export function createLogPartitionsWorker(
  connection: ConnectionOptions,
  redisPrefix: string,
  process: (job: Job<LogPartitionsJob>) => Promise<unknown>,
  options: Partial<WorkerOptions> = {},
): Worker<LogPartitionsJob> {
  return new Worker<LogPartitionsJob>(
    MAINTENANCE_QUEUE_NAMES.logPartitions,
    (job) => {
      logPartitionsJobSchema.parse(job.data);
      return process(job);
    },
    // One run at a time per worker; runs of two workers are serialised in PostgreSQL.
    { connection, prefix: bullPrefix(redisPrefix, connection), concurrency: 1, ...options },
  );
}
