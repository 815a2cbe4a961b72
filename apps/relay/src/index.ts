import { redisTargetOf } from '@modelgate/config';
import { assertMigrationsApplied, createPrismaClient, RELEASE_MIGRATIONS } from '@modelgate/db';
import { exitOnBootFailure, runService } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import { startTracing } from '@modelgate/telemetry';
import { closeRedis } from '@modelgate/queue/connections';
import { assertRedisDatabase } from '@modelgate/queue/redis-database';
import { setFlagsFromString } from 'node:v8';
import { loadRelayEnv } from './env';
import { connectRelayRedis, createRelay } from './relay';

/**
 * Under load most of what a call allocates lives a few scavenges and is promoted; V8's default
 * growth then lets the old generation reach ~4x the live heap before collecting it (~250 MB
 * resident after a benchmark run). Growing it by 25% instead keeps the relay near 140 MB (with the
 * young generation of infra/node-runtime.json) for one more full collection every ~10 s under load,
 * about 3 us per call. No hard cap: large prompts still fit.
 */
setFlagsFromString('--heap-growing-percent=25');

async function main() {
  const env = loadRelayEnv();
  const logger = createLogger({ service: 'relay', level: env.LOG_LEVEL });
  const stopTracing = await startTracing({ serviceName: env.OTEL_SERVICE_NAME ?? 'relay', endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT });
  await assertMigrationsApplied(env.DATABASE_URL, RELEASE_MIGRATIONS);
  const prisma = createPrismaClient({ databaseUrl: env.DATABASE_URL, maxConnections: env.DATABASE_POOL_SIZE });
  const redis = await connectRelayRedis(redisTargetOf(env), (err) => logger.warn({ err: { message: err.message } }, 'redis error'));
  await assertRedisDatabase(redis);
  const relay = createRelay({ env, logger, prisma, redis });
  await relay.start();
  await runService(relay.handler, {
    name: 'relay',
    logger,
    host: env.HOST,
    port: env.RELAY_PORT,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    // After the HTTP drain: every settled charge is written before the process exits.
    closers: [() => relay.close(), () => prisma.$disconnect(), () => closeRedis(redis), stopTracing],
  });
}

main().catch(exitOnBootFailure('relay'));
