// One relay per test file, on the run's private database and Redis prefix, with fake upstreams.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEnv } from '@modelgate/config';
import type { PrismaClient } from '@modelgate/db';
import { listen } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import {
  createApiKey,
  createChannel,
  createTestPrisma,
  createTestRedis,
  createUser,
  deleteKeysWithPrefix,
  redisPrefix,
  resetDatabase,
  setOption,
} from '@modelgate/testing';
import type { Redis } from 'ioredis';
import OpenAI from 'openai';
import { relayEnvSchema } from '../src/env';
import { createRelay, type Relay } from '../src/relay';

/** The relay requires 32+ characters; factories encrypt channel keys with the same variable. */
process.env.CRYPTO_SECRET = 'relay-tests-crypto-secret-0123456789abcdef';

export const MODEL = 'gpt-3.5-turbo-instruct';

export interface RelayHarness {
  url: string;
  relay: Relay;
  prisma: PrismaClient;
  redis: Redis;
  /** Empties the database and the billing keys, and reloads every cache. */
  reset(): Promise<void>;
  /** Re-reads channels and options (what the account service's invalidation messages trigger). */
  reloadCaches(): Promise<void>;
  close(): Promise<void>;
}

export async function startRelay(envOverrides: Record<string, string> = {}): Promise<RelayHarness> {
  const env = parseEnv(relayEnvSchema, {
    ...process.env,
    LEDGER_FLUSH_INTERVAL_MS: '50',
    CACHE_REFRESH_INTERVAL_MS: '600000',
    ...envOverrides,
  });
  const prisma = createTestPrisma();
  const redis = createTestRedis();
  const relay = createRelay({ env, logger: createLogger({ service: 'relay', level: 'silent' }), prisma, redis });
  await relay.start();
  const server: Server = await listen(relay.app, 0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const prefix = redisPrefix();
  const reloadCaches = async () => {
    await Promise.all([relay.channels.reload(), relay.options.reload()]);
  };
  return {
    url,
    relay,
    prisma,
    redis,
    reloadCaches,
    async reset() {
      await relay.ledger.flush();
      await resetDatabase(prisma);
      await deleteKeysWithPrefix(redis, `${prefix}bal:`);
      await deleteKeysWithPrefix(redis, `${prefix}ledger:`);
      await relay.cacheSync.refreshAll();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await relay.close();
      await prisma.$disconnect();
      redis.disconnect();
    },
  };
}

export interface Customer {
  userId: number;
  tokenId: number;
  key: string;
}

/** A user with `quota` and one key (default: limited to `remainQuota` or unlimited when omitted). */
export async function createCustomer(
  prisma: PrismaClient,
  { quota = 1_000_000, remainQuota, group, ...keyFields }: {
    quota?: number;
    remainQuota?: number;
    group?: string;
  } & Parameters<typeof createApiKey>[2] = {},
): Promise<Customer> {
  const user = await createUser(prisma, { quota, ...(group ? { group } : {}) });
  const { token, key } = await createApiKey(prisma, user.id, {
    ...(remainQuota === undefined ? { unlimitedQuota: true, remainQuota: 0 } : { remainQuota }),
    ...keyFields,
  });
  return { userId: user.id, tokenId: token.id, key };
}

/** An OpenAI channel pointing at a fake upstream. */
export function openAiChannel(prisma: PrismaClient, baseUrl: string, fields: Parameters<typeof createChannel>[1] = {}) {
  return createChannel(prisma, { type: 1, baseUrl, models: MODEL, key: 'sk-upstream-openai-secret', ...fields });
}

/** Prices that make charges easy to check: 1 quota per prompt token and per completion token. */
export async function setUnitPrices(prisma: PrismaClient, models: string[] = [MODEL]): Promise<void> {
  await setOption(prisma, 'ModelRatio', Object.fromEntries(models.map((m) => [m, 1])));
  await setOption(prisma, 'CompletionRatio', Object.fromEntries(models.map((m) => [m, 1])));
}

export function openAiClient(harness: RelayHarness, apiKey: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${harness.url}/v1`, maxRetries: 0, defaultHeaders: headers });
}

/** Polls until `check` passes (for effects that happen after the response, e.g. an upstream seeing the close). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Consume rows of the ledger, oldest first. */
export function consumeLogs(prisma: PrismaClient) {
  return prisma.log.findMany({ where: { type: 2 }, orderBy: { id: 'asc' } });
}
