import { redisTargetOf } from '@modelgate/config';
import { assertMigrationsApplied, createPrismaClient, RELEASE_MIGRATIONS } from '@modelgate/db';
import { exitOnBootFailure, runService } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import { startTracing } from '@modelgate/telemetry';
import { closeRedis, createMailQueue, createPaymentWebhookQueue, createProducerConnection, createServiceRedis, withErrorListener } from '@modelgate/queue';
import { assertRedisDatabase } from '@modelgate/queue/redis-database';
import { createAccountApp } from './app';
import { bootstrapAccount } from './bootstrap';
import { loadAccountEnv } from './env';
import { createAccountMetrics } from './features/metrics/metrics';

async function main() {
  const env = loadAccountEnv();
  const logger = createLogger({ service: 'account', level: env.LOG_LEVEL });
  const stopTracing = await startTracing({ serviceName: env.OTEL_SERVICE_NAME ?? 'account', endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT });
  await assertMigrationsApplied(env.DATABASE_URL, RELEASE_MIGRATIONS);
  const prisma = createPrismaClient({ databaseUrl: env.DATABASE_URL, maxConnections: env.DATABASE_POOL_SIZE });
  // Sessions and rate limits: while Redis is away their requests get 503 at once (createServiceRedis);
  // access tokens, the webhook intake and everything else keep working.
  const redisTarget = redisTargetOf(env);
  const redis = withErrorListener(createServiceRedis(redisTarget), (err) => logger.warn({ err: { message: err.message } }, 'redis error'));
  await assertRedisDatabase(redis);
  // Its own connection: BullMQ needs one without a key prefix, failing fast when Redis is down.
  const queueConnection = withErrorListener(createProducerConnection(redisTarget), (err) => logger.warn({ err: { message: err.message } }, 'redis error (payment queue)'));
  const paymentQueue = createPaymentWebhookQueue(queueConnection, env.REDIS_PREFIX);
  paymentQueue.on('error', (err) => logger.warn({ err: { message: err.message } }, 'payment queue error'));
  const mailQueue = createMailQueue(queueConnection, env.REDIS_PREFIX);
  mailQueue.on('error', (err) => logger.warn({ err: { message: err.message } }, 'mail queue error'));
  const deps = { env, logger, prisma, redis, paymentQueue, mailQueue, metrics: createAccountMetrics() };
  await bootstrapAccount(deps);
  const app = createAccountApp(deps);
  await runService(app, {
    name: 'account',
    logger,
    host: env.HOST,
    port: env.ACCOUNT_PORT,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    closers: [() => prisma.$disconnect(), () => closeRedis(redis), () => paymentQueue.close(), () => mailQueue.close(), () => closeRedis(queueConnection), stopTracing],
  });
}

main().catch(exitOnBootFailure('account'));
