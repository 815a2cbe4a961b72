// One relay per test file, on the run's private database and Redis prefix, with fake upstreams.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEnv } from '@modelgate/config';
import type { PrismaClient } from '@modelgate/db';
import { listen } from '@modelgate/http';
import { createLogger, type Logger } from '@modelgate/logger';
import {
  createApiKey,
  createChannel,
  createTestPrisma,
  createUser,
  deleteKeysWithPrefix,
  redisPrefix,
  resetDatabase,
  setOption,
  testRedisUrl,
} from '@modelgate/testing';
import { type FakeUpstream, type FakeUpstreamOptions, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { relayEnvSchema } from '../src/env';
import type { LedgerEntry } from '../src/features/billing/ledger-entry';
import { connectRelayRedis, createRelay, type Relay } from '../src/relay';

/** The relay requires 32+ characters; factories encrypt channel keys with the same variable. */
process.env.CRYPTO_SECRET = 'relay-tests-crypto-secret-0123456789abcdef';

export const MODEL = 'gpt-3.5-turbo-instruct';

export interface RelayHarness {
  url: string;
  relay: Relay;
  prisma: PrismaClient;
  redis: Redis;
  /** Empties the database, the billing keys and the limits' counts, and reloads every cache. */
  reset(): Promise<void>;
  /** Re-reads channels and options (what the account service's invalidation messages trigger). */
  reloadCaches(): Promise<void>;
  close(): Promise<void>;
}

export interface RelayHarnessOptions {
  /** The relay's logger (default: silent). */
  logger?: Logger;
  /** The Redis server of the relay (default: the run's); a fault test's own server it may stop. */
  redisUrl?: string;
  /** The relay's database client (default: a new one on the run's database), e.g. one that counts queries. */
  prisma?: PrismaClient;
}

export async function startRelay(envOverrides: Record<string, string> = {}, options: RelayHarnessOptions = {}): Promise<RelayHarness> {
  const env = parseEnv(relayEnvSchema, {
    ...process.env,
    LEDGER_FLUSH_INTERVAL_MS: '50',
    CACHE_REFRESH_INTERVAL_MS: '600000',
    ...envOverrides,
  });
  const prisma = options.prisma ?? createTestPrisma();
  // index.ts logs Redis errors; fault tests provoke them on purpose.
  const redis = await connectRelayRedis(options.redisUrl ?? testRedisUrl(), () => undefined);
  const logger = options.logger ?? createLogger({ service: 'relay', level: 'silent' });
  const relay = createRelay({ env, logger, prisma, redis });
  await relay.start();
  const server: Server = await listen(relay.handler, 0, '127.0.0.1');
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
      await deleteKeysWithPrefix(redis, `${prefix}lim:`);
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

/** For every user: quota = sum of its log deltas; used_quota and request_count match its consume rows. */
export async function expectLedgerInvariant(prisma: PrismaClient): Promise<void> {
  const users = await prisma.user.findMany();
  for (const user of users) {
    const logs = await prisma.log.findMany({ where: { userId: user.id } });
    const consume = logs.filter((l) => l.type === 2);
    expect(user.quota).toBe(logs.reduce((sum, l) => sum + l.quota, 0n));
    expect(user.usedQuota).toBe(-consume.reduce((sum, l) => sum + l.quota, 0n));
    expect(user.requestCount).toBe(BigInt(consume.length));
  }
}

/**
 * The current test file's relay and fake upstreams, started by `relaySuite` (live bindings: read
 * them inside hooks and tests, once its `beforeAll` has run).
 */
export let harness: RelayHarness;
export let upstream: FakeUpstream;
/** The second fake upstream, when the suite asked for two (the backup channel of routing tests). */
export let backup: FakeUpstream;
export let upstreams: FakeUpstream[] = [];

/**
 * The setup every relay test file shares: `upstreams` fake upstreams (default 1) and a relay, started
 * before the file's tests and closed after them.
 */
export function relaySuite(envOverrides: Record<string, string> = {}, options: RelayHarnessOptions & { upstreams?: number } = {}): void {
  beforeAll(async () => {
    upstreams = await Promise.all(Array.from({ length: options.upstreams ?? 1 }, () => startFakeUpstream()));
    const [first, second] = upstreams;
    if (!first) throw new Error('a relay suite needs at least one fake upstream');
    upstream = first;
    if (second) backup = second;
    harness = await startRelay(envOverrides, options);
  });
  afterAll(async () => {
    await harness?.close();
    await Promise.all(upstreams.map((fake) => fake.close()));
  });
}

/** A clean start for one test: upstreams answering normally with nothing recorded, empty database and billing keys. */
export async function resetSuite(mode: Omit<FakeUpstreamOptions, 'mode'> = { chunks: 5, chunkDelayMs: 0 }): Promise<void> {
  for (const fake of upstreams) {
    fake.setMode('ok', mode);
    fake.requests.length = 0;
  }
  await harness.reset();
}

/** Unit prices and one OpenAI channel on the first upstream, in the caches. */
export async function withOpenAiChannel(): Promise<void> {
  await setUnitPrices(harness.prisma);
  await openAiChannel(harness.prisma, upstream.url);
  await harness.reloadCaches();
}

/** A settled charge of 40 quota (20 + 20 tokens) as the relay queues it, for ledger tests that stage entries by hand. */
export function ledgerEntry(customer: Customer, channelId: number, fields: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    id: `test:${randomUUID()}`,
    userId: customer.userId,
    username: 'someone',
    tokenId: customer.tokenId,
    tokenName: 'key',
    limitedToken: false,
    model: MODEL,
    channelId,
    quota: 40,
    promptTokens: 20,
    completionTokens: 20,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    useTimeMs: 5,
    firstByteMs: 2,
    isStream: false,
    requestId: randomUUID(),
    createdAt: Date.now(),
    group: 'default',
    modelRatio: 1,
    completionRatio: 1,
    groupRatio: 1,
    cacheRatio: 1,
    cacheCreationRatio: 1,
    ...fields,
  };
}
