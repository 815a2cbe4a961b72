import { type ClientOf, createServiceRedis, type RedisAddress, type RedisClient, socketOf, withErrorListener } from '@modelgate/queue/connections';
import { publishCacheInvalidation } from '@modelgate/queue/invalidation';
import { randomBytes } from 'node:crypto';
import { internalApiToken, redisTargetOf } from '@modelgate/config';
import type { RequestListener } from 'node:http';
import { hostname } from 'node:os';
import type { PrismaClient } from '@modelgate/db';
import type { Logger } from '@modelgate/logger';
import type { CacheInvalidation } from '@modelgate/schemas';
import { createRelayApp } from './app';
import type { RelayEnv } from './env';
import { BalanceWarningQueue } from './features/billing/balance-warnings';
import { BalanceMirror } from './features/billing/balances';
import { LedgerWriter } from './features/billing/ledger-writer';
import { billingKeys, withBillingScripts } from './features/billing/redis-scripts';
import { LedgerRepository } from './features/billing/repository';
import { Turn } from './features/billing/turn-batch';
import { CacheSync } from './features/cache-sync/subscriber';
import { ChannelTester } from './features/channel-test/service';
import { ChannelCache } from './features/channels/channel-cache';
import { ChannelRepository } from './features/channels/repository';
import { KeyFailureLimit } from './features/keys/failure-limit';
import { KeyCache } from './features/keys/key-cache';
import { limitKeys, withLimitScripts } from './features/keys/limit-scripts';
import { KeyLimits } from './features/keys/limits';
import { KeyRepository } from './features/keys/repository';
import { RelayMetrics } from './features/metrics/metrics';
import { OptionsCache } from './features/options/options-cache';
import { RelayService } from './features/relay/service';
import { UpstreamClient } from './features/upstream/client';
import { forgetUnloadedChannels, providerFor } from './providers/registry';

/**
 * The relay's Redis connection, once connected (rejects when Redis cannot be reached: the hot path
 * needs it). It fails fast while Redis is away (503 at once, see createServiceRedis). No
 * auto-pipelining: the hot path's commands are already batched per event-loop turn (BalanceMirror),
 * and a pipeline per command costs more than the write it would save.
 */
export async function connectRelayRedis<A extends RedisAddress>(address: A, onError: (err: Error) => void): Promise<ClientOf<A>> {
  const redis = withErrorListener(createServiceRedis(address, { lazyConnect: true }), onError);
  await (redis as RedisClient).connect();
  return redis;
}

export interface RelayInfra {
  env: RelayEnv;
  logger: Logger;
  prisma: PrismaClient;
  redis: RedisClient;
}

/** The relay's parts, wired; `start()` loads caches and starts the background work, `close()` stops it. */
export interface Relay {
  /** The HTTP request listener. */
  handler: RequestListener;
  keys: KeyCache;
  channels: ChannelCache;
  options: OptionsCache;
  ledger: LedgerWriter;
  cacheSync: CacheSync;
  metrics: RelayMetrics;
  start(): Promise<void>;
  /** Stops background work, writes every queued charge, closes upstream connections. */
  close(): Promise<void>;
}

export function createRelay({ env, logger, prisma, redis }: RelayInfra): Relay {
  const billingRedis = withBillingScripts(redis);
  const redisTarget = redisTargetOf(env);
  const keysOfBilling = billingKeys(env.REDIS_PREFIX, redisTarget.kind === 'cluster');
  const instanceId = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const ledgerRepository = new LedgerRepository(prisma, `${env.REDIS_PREFIX}ledger`);

  const keyRepository = new KeyRepository(prisma);
  const keys = new KeyCache(keyRepository);
  const channelRepository = new ChannelRepository(prisma);
  const channels = new ChannelCache(channelRepository, env.CRYPTO_SECRET, env.CHANNEL_COOLDOWN_MS, logger, providerFor, forgetUnloadedChannels);
  const options = new OptionsCache(prisma);
  // The Redis work of one event-loop turn (reservations, settlements, limit checks) leaves in one write.
  const turn = new Turn(() => socketOf(redis));
  const balances = new BalanceMirror(billingRedis, keysOfBilling, ledgerRepository, instanceId, {
    logger,
    turn,
    onKeyDrained: (tokenId) => keys.markExhausted(tokenId),
  });
  const publish = (message: CacheInvalidation) => publishCacheInvalidation(redis, env.REDIS_PREFIX, message);
  const balanceWarnings = new BalanceWarningQueue(redisTarget, env.REDIS_PREFIX, logger);
  const ledger = new LedgerWriter(
    billingRedis,
    keysOfBilling,
    ledgerRepository,
    instanceId,
    {
      flushIntervalMs: env.LEDGER_FLUSH_INTERVAL_MS,
      batchSize: env.LEDGER_BATCH_SIZE,
      onKeysDrained: (tokenIds) => Promise.all(tokenIds.map((tokenId) => publish({ kind: 'token', tokenId }))),
      onBalanceCrossings: (crossings) => balanceWarnings.enqueue(crossings),
    },
    logger,
  );
  const upstream = new UpstreamClient(
    {
      connectMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
      firstByteMs: env.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
      idleMs: env.UPSTREAM_IDLE_TIMEOUT_MS,
    },
    env.MAX_UPSTREAM_BODY_MB * 1024 * 1024,
  );
  const metrics = new RelayMetrics();
  metrics.observeState({ ledgerCounts: () => ledger.counts(), channels: () => channels.states() });
  const limits = new KeyLimits(withLimitScripts(redis), limitKeys(env.REDIS_PREFIX), {
    defaultRequestsPerMinute: env.RELAY_KEY_RATE_LIMIT_PER_MINUTE,
    options,
    readBudgetUse: (tokenId) => keyRepository.findBudgetUse(tokenId),
    logger,
    onRefused: (kind) => metrics.limitRefused(kind),
    turn,
  });
  const keyFailures = new KeyFailureLimit(redis, env.REDIS_PREFIX, env.RELAY_KEY_FAILURES_PER_MINUTE);
  const relay = new RelayService({ channels, channelRepository, options, balances, upstream, publish, logger, metrics, limits });
  const cacheSync = new CacheSync({ keys, channels, options, ledger, logger });
  const handler = createRelayApp({
    logger,
    prisma,
    redis,
    keys,
    keyFailures,
    channels,
    relay,
    metrics: metrics.service,
    maxBodyMb: env.MAX_REQUEST_BODY_MB,
    trustedProxies: env.TRUSTED_PROXIES,
    channelTester: new ChannelTester({ repository: channelRepository, cryptoSecret: env.CRYPTO_SECRET, providerOf: providerFor, upstream }),
    internalToken: internalApiToken(env.CRYPTO_SECRET),
  });

  return {
    handler,
    keys,
    channels,
    options,
    ledger,
    cacheSync,
    metrics,
    async start() {
      await cacheSync.start(redis, env.REDIS_PREFIX, env.CACHE_REFRESH_INTERVAL_MS);
      await ledger.start();
    },
    async close() {
      await cacheSync.stop();
      await limits.stop();
      // Settlements waiting for a retry go to the queue before the ledger's last flush.
      await balances.stop();
      await ledger.stop();
      // After the last flush: its crossings are queued too.
      await balanceWarnings.close();
      await upstream.close();
    },
  };
}
