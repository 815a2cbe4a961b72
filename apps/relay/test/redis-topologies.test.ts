// The relay's hot path and ledger on a real Redis Cluster (three masters with a replica each) or a
// real Sentinel setup (master, replica, three sentinels), then with the master of its billing keys
// killed under load: a few seconds of 503s, and every answered call charged once.
import { parseEnv, redisTargetOf } from '@modelgate/config';
import type { PrismaClient } from '@modelgate/db';
import { listen } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import { closeRedis, type RedisClient } from '@modelgate/queue/connections';
import { createTestPrisma, redisPrefix, resetDatabase } from '@modelgate/testing';
import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { waitFor } from '@modelgate/testing/processes';
import { type RedisTopology, startRedisTopology } from '@modelgate/testing/redis-topologies';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { relayEnvSchema } from '../src/env';
import { billingKeys } from '../src/features/billing/redis-scripts';
import { connectRelayRedis, createRelay, type Relay } from '../src/relay';
import { consumeLogs, createCustomer, type Customer, expectLedgerInvariant, MODEL, openAiChannel, setUnitPrices } from './harness';

/** "A few seconds" of 503s, with room for a busy 2-core machine (they lasted 2 to 3 s here). */
const MAX_UNAVAILABLE_MS = 8_000;

jest.setTimeout(60_000);

describe.each(['cluster', 'sentinel'] as const)('on a Redis %s', (kind) => {
  let upstream: FakeUpstream;
  let prisma: PrismaClient;
  let topology: RedisTopology;
  let redis: RedisClient;
  let relay: Relay;
  let server: Server;
  let url: string;
  let customer: Customer;
  const prefix = redisPrefix();
  const keys = billingKeys(prefix, kind === 'cluster');

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    prisma = createTestPrisma();
    topology = await startRedisTopology(kind);
    const env = parseEnv(relayEnvSchema, { ...process.env, ...topology.env, LEDGER_FLUSH_INTERVAL_MS: '50', CACHE_REFRESH_INTERVAL_MS: '600000' });
    redis = await connectRelayRedis(redisTargetOf(env), () => undefined);
    relay = createRelay({ env, logger: createLogger({ service: 'relay', level: 'silent' }), prisma, redis });
    await resetDatabase(prisma);
    await relay.start();
    server = await listen(relay.handler, 0, '127.0.0.1');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await setUnitPrices(prisma);
    await openAiChannel(prisma, upstream.url);
    await Promise.all([relay.channels.reload(), relay.options.reload()]);
    customer = await createCustomer(prisma, { remainQuota: 500_000, rpmLimit: 100_000 });
  });

  afterAll(async () => {
    server?.closeAllConnections();
    if (server) await new Promise((resolve) => server.close(resolve));
    await relay?.close();
    if (redis) await closeRedis(redis);
    await topology?.stop();
    await prisma?.$disconnect();
    await upstream?.close();
  });

  const complete = async () => {
    const res = await fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: [1, 2, 3], max_tokens: 5 }),
    });
    await res.arrayBuffer();
    return res.status;
  };

  /** Every settled charge is in PostgreSQL, once, and balances equal the sum of their log rows. */
  const expectAllWritten = async (answered: number) => {
    await waitFor(async () => {
      await relay.ledger.flush();
      return (await relay.ledger.counts()).backlog === 0;
    }, 'the ledger to be written', 20_000, 200);
    const logs = await consumeLogs(prisma);
    expect(logs).toHaveLength(answered);
    expect(new Set(logs.map((log) => log.requestId)).size).toBe(answered);
    await expectLedgerInvariant(prisma);
    const token = await prisma.token.findUniqueOrThrow({ where: { id: customer.tokenId } });
    expect(token.remainQuota).toBe(500_000n - token.usedQuota);
  };

  it('relays, reserves, settles and writes the ledger, with the billing keys in one slot', async () => {
    for (let i = 0; i < 5; i += 1) expect(await complete()).toBe(200);
    await expectAllWritten(5);
    expect(await redis.exists(keys.user(customer.userId), keys.token(customer.tokenId))).toBe(2);
    if (kind === 'cluster') {
      // A key's slot is its hash tag's (the first `{...}`): one tag, one slot. The scripts above ran
      // on these keys, which a Cluster refuses across slots (CROSSSLOT).
      const tags = [keys.user(customer.userId), keys.token(customer.tokenId), keys.queue, keys.lock].map((key) => /\{([^}]+)\}/.exec(key)?.[1]);
      expect(new Set(tags)).toEqual(new Set(['billing']));
    }
  });

  it('answers 503 for a few seconds at most when the master is killed under load, and charges every answered call once', async () => {
    const before = (await consumeLogs(prisma)).length;
    const results: { status: number; at: number }[] = [];
    let loading = true;
    const load = async () => {
      while (loading) results.push({ status: await complete(), at: Date.now() });
    };
    const clients = Array.from({ length: 4 }, load);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const killedAt = Date.now();
    await topology.failOver(keys.queue);
    // Calls go through again (the client found the new master), then keep the load a while longer.
    await waitFor(() => results.some((result) => result.at > Date.now() - 200 && result.status === 200) && results.at(-1)?.status === 200, 'calls to succeed again', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    loading = false;
    await Promise.all(clients);

    const unavailable = results.filter((result) => result.status !== 200);
    expect(new Set(unavailable.map((result) => result.status))).toEqual(new Set(unavailable.length > 0 ? [503] : []));
    for (const result of unavailable) expect(result.at - killedAt).toBeLessThan(MAX_UNAVAILABLE_MS);
    const answered = results.filter((result) => result.status === 200).length;
    await expectAllWritten(before + answered);
  });
});
