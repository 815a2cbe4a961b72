import { parseEnv } from '@modelgate/config';
import type { PrismaClient } from '@modelgate/db';
import { createLogger } from '@modelgate/logger';
import { closeRedis, createMailQueue, createPaymentWebhookQueue, createProducerConnection } from '@modelgate/queue';
import {
  createTestPrisma,
  createTestRedis,
  deleteKeysWithPrefix,
  redisPrefix,
  resetDatabase,
  testDatabaseUrl,
  testRedisUrl,
} from '@modelgate/testing';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { createAccountApp } from '../../src/app';
import type { AccountDeps } from '../../src/deps';
import { accountEnvSchema } from '../../src/env';
import { createAccountMetrics } from '../../src/features/metrics/metrics';

/** A wall clock the test can move forward (TOTP steps, lock and pending-login expiries). */
export class TestClock {
  private offsetMs = 0;
  now = (): number => Date.now() + this.offsetMs;
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface TestAccount {
  app: Express;
  deps: AccountDeps;
  prisma: PrismaClient;
  redis: Redis;
  clock: TestClock;
  /** Every log line the service wrote, at every level. */
  logLines: string[];
  /** Empty database, no Redis keys (sessions, rate limits), clock back to real time, logs cleared. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The account app on the run's private database and Redis prefix, built like index.ts builds it,
 * with a movable clock, cheap password hashing and a logger that keeps its lines for inspection.
 */
export function createTestAccount(envOverrides: Record<string, string> = {}, options: { redis?: Redis } = {}): TestAccount {
  const prisma = createTestPrisma();
  const redis = options.redis ?? createTestRedis();
  const queueConnection = createProducerConnection(testRedisUrl());
  const paymentQueue = createPaymentWebhookQueue(queueConnection, redisPrefix());
  const mailQueue = createMailQueue(queueConnection, redisPrefix());
  // The factories encrypt channel keys with the run's CRYPTO_SECRET: the service must use the same one.
  const env = parseEnv(accountEnvSchema, {
    NODE_ENV: 'test',
    CRYPTO_SECRET: process.env.CRYPTO_SECRET,
    DATABASE_URL: testDatabaseUrl(),
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: redisPrefix(),
    PASSWORD_HASH_MEMORY_KIB: '256',
    ...envOverrides,
  });
  const logLines: string[] = [];
  const logger = createLogger({ service: 'account', level: 'trace', destination: { write: (line: string) => logLines.push(line) } });
  let clock = new TestClock();
  const deps: AccountDeps = { env, logger, prisma, redis, paymentQueue, mailQueue, metrics: createAccountMetrics(), now: () => clock.now() };
  const account: TestAccount = {
    app: createAccountApp(deps),
    deps,
    prisma,
    redis,
    get clock() {
      return clock;
    },
    logLines,
    async reset() {
      await resetDatabase(prisma);
      await deleteKeysWithPrefix(redis, redisPrefix());
      clock = new TestClock();
      logLines.length = 0;
    },
    async close() {
      await paymentQueue.close();
      await mailQueue.close();
      await queueConnection.quit();
      await closeRedis(redis);
      await prisma.$disconnect();
    },
  };
  return account;
}
