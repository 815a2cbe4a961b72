import { redisTargetOf } from '@modelgate/config';
import { assertMigrationsApplied, createPrismaClient, RELEASE_MIGRATIONS } from '@modelgate/db';
import { describeError, exitOnBootFailure, runService } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import { startTracing } from '@modelgate/telemetry';
import {
  closeRedis,
  createLogPartitionsQueue,
  createMailQueue,
  createPaymentWebhookQueue,
  createProducerConnection,
  createServiceRedis,
  createWorkerConnection,
  scheduleLogPartitions,
  withErrorListener,
} from '@modelgate/queue';
import { assertRedisDatabase } from '@modelgate/queue/redis-database';
import { createWorkerApp } from './app';
import { loadWorkerEnv } from './env';
import { startBalanceWarningWorker } from './features/balance-warnings/balance-warning-worker';
import { startLogPartitionsWorker } from './features/log-partitions/log-partitions-worker';
import { startMailWorker } from './features/mail/mail-worker';
import { createWorkerMetrics } from './features/metrics/metrics';
import { startPaymentWorker } from './features/payments/payment-worker';
import { startInboxSweeper } from './features/payments/sweeper';

async function main() {
  const env = loadWorkerEnv();
  const logger = createLogger({ service: 'worker', level: env.LOG_LEVEL });
  const stopTracing = await startTracing({ serviceName: env.OTEL_SERVICE_NAME ?? 'worker', endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT });
  await assertMigrationsApplied(env.DATABASE_URL, RELEASE_MIGRATIONS);
  const prisma = createPrismaClient({ databaseUrl: env.DATABASE_URL, maxConnections: env.DATABASE_POOL_SIZE });
  const onRedisError = (err: Error) => logger.warn({ error: describeError(err) }, 'redis error');
  const redisTarget = redisTargetOf(env);
  // Readiness probe, BullMQ consumer (blocking commands) and the sweeper's producer each get their own connection.
  const redis = withErrorListener(createServiceRedis(redisTarget), onRedisError);
  await assertRedisDatabase(redis);
  const workerConnection = withErrorListener(createWorkerConnection(redisTarget), onRedisError);
  const queueConnection = withErrorListener(createProducerConnection(redisTarget), onRedisError);
  const queue = createPaymentWebhookQueue(queueConnection, env.REDIS_PREFIX);
  queue.on('error', onRedisError);

  const paymentWorker = startPaymentWorker({
    prisma,
    logger,
    connection: workerConnection,
    publisher: queueConnection,
    redisPrefix: env.REDIS_PREFIX,
    concurrency: env.WORKER_CONCURRENCY,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
  });
  // Mail has a consumer connection of its own: BullMQ's blocking reads hold one per worker.
  const mailConnection = withErrorListener(createWorkerConnection(redisTarget), onRedisError);
  const mailWorker = startMailWorker({
    prisma,
    logger,
    connection: mailConnection,
    redisPrefix: env.REDIS_PREFIX,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
  });
  // Balance warnings by email become mail jobs, sent by the mail worker.
  const mailQueue = createMailQueue(queueConnection, env.REDIS_PREFIX);
  mailQueue.on('error', onRedisError);
  const warningConnection = withErrorListener(createWorkerConnection(redisTarget), onRedisError);
  const warningWorker = startBalanceWarningWorker({
    prisma,
    logger,
    mailQueue,
    cryptoSecret: env.CRYPTO_SECRET,
    connection: warningConnection,
    redisPrefix: env.REDIS_PREFIX,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
  });
  // `logs` partitions: created ahead and past LogRetentionDays dropped, daily and at start.
  const partitionsConnection = withErrorListener(createWorkerConnection(redisTarget), onRedisError);
  const partitionsWorker = startLogPartitionsWorker({
    prisma,
    logger,
    connection: partitionsConnection,
    redisPrefix: env.REDIS_PREFIX,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
  });
  const partitionsQueue = createLogPartitionsQueue(queueConnection, env.REDIS_PREFIX);
  partitionsQueue.on('error', onRedisError);
  await scheduleLogPartitions(partitionsQueue);
  const metrics = createWorkerMetrics(queue);
  metrics.observe(paymentWorker);
  metrics.observeJobs(mailWorker);
  metrics.observeJobs(warningWorker);
  metrics.observeJobs(partitionsWorker);
  const sweeper = startInboxSweeper({
    prisma,
    queue,
    logger,
    intervalMs: env.INBOX_SWEEP_INTERVAL_MS,
    minAgeMs: env.INBOX_SWEEP_MIN_AGE_MS,
  });

  const app = createWorkerApp({ logger, prisma, redis, metrics: metrics.service });
  await runService(app, {
    name: 'worker',
    logger,
    host: env.HOST,
    port: env.WORKER_PORT,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    // Drain first: worker.close() lets running jobs finish and stops taking new ones.
    closers: [
      () => sweeper.stop(),
      () => paymentWorker.close(),
      () => mailWorker.close(),
      () => warningWorker.close(),
      () => partitionsWorker.close(),
      () => queue.close(),
      () => mailQueue.close(),
      () => partitionsQueue.close(),
      () => closeRedis(workerConnection),
      () => closeRedis(mailConnection),
      () => closeRedis(warningConnection),
      () => closeRedis(partitionsConnection),
      () => closeRedis(queueConnection),
      () => prisma.$disconnect(),
      () => closeRedis(redis),
      stopTracing,
    ],
  });
}

main().catch(exitOnBootFailure('worker'));
