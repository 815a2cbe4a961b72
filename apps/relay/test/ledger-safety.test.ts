// Billing under failures: unbelievable upstream usage, a ledger entry PostgreSQL refuses, and Redis
// failing during settlement or release (docs/api.md 2.5: every charge written once, no hold leaked).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestRedis, redisPrefix } from '@modelgate/testing';
import type { Redis } from 'ioredis';
import type { LedgerEntry } from '../src/features/billing/ledger-entry';
import type { BillingRedis } from '../src/features/billing/redis-scripts';
import { consumeLogs, createCustomer, type Customer, eventually, expectLedgerInvariant, harness, ledgerEntry, MODEL, openAiChannel, openAiClient, relaySuite, resetSuite, setUnitPrices, startRelay, upstream } from './harness';

relaySuite();
let lying: { url: string; server: Server };

/** A provider whose usage claims 3 000 000 000 prompt tokens (more than a ledger row can hold). */
async function startLyingUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'cmpl-lying',
        object: 'text_completion',
        created: 1,
        model: MODEL,
        choices: [{ text: ' hello hello', index: 0, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3_000_000_000, completion_tokens: 2, total_tokens: 3_000_000_002 },
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  lying = await startLyingUpstream();
});

afterAll(() => new Promise((resolve) => lying.server.close(resolve)));

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma);
});

/** 5 prompt tokens and max 5 completion tokens: reserves 10, costs 10 with the fake upstream. */
const TEN_QUOTA_REQUEST = { model: MODEL, prompt: [1, 2, 3, 4, 5], max_tokens: 5 };

const prefix = () => redisPrefix();

describe('unbelievable usage', () => {
  it('charges our own prompt count when the upstream reports 3 000 000 000 prompt tokens, and keeps writing the ledger', async () => {
    await openAiChannel(harness.prisma, lying.url);
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma, { quota: 1_000 });
    const completion = await openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST);
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    await harness.relay.ledger.flush();
    const logs = await consumeLogs(harness.prisma);
    expect(logs.map((l) => [l.promptTokens, l.completionTokens, l.quota])).toEqual([[5, 2, -7n]]);
    await expectLedgerInvariant(harness.prisma);
  });
});

describe('a ledger entry PostgreSQL refuses', () => {
  async function queueEntry(customer: Customer, channelId: number, promptTokens: number): Promise<LedgerEntry> {
    const entry = ledgerEntry(customer, channelId, { quota: 10, promptTokens, completionTokens: 5 });
    // As the settle step leaves it: the charge pending on the mirror, the entry queued.
    await harness.redis.hincrby(`${prefix()}bal:u:${customer.userId}`, 'pending', entry.quota);
    await harness.redis.rpush(`${prefix()}ledger:queue`, JSON.stringify(entry));
    return entry;
  }

  it('is set aside in the dead-letter list, uncharged, while the entries around it are written', async () => {
    const channel = await openAiChannel(harness.prisma, upstream.url);
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma, { quota: 1_000 });
    await openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST);
    await harness.relay.ledger.flush();

    await harness.relay.ledger.stop();
    let poisoned: LedgerEntry;
    try {
      await queueEntry(customer, channel.id, 5);
      poisoned = await queueEntry(customer, channel.id, 3_000_000_000);
      await queueEntry(customer, channel.id, 5);
    } finally {
      await harness.relay.ledger.start();
    }
    await harness.relay.ledger.flush();

    expect(await consumeLogs(harness.prisma)).toHaveLength(3);
    const deadLetters = await harness.redis.lrange(`${prefix()}ledger:dead-letters`, 0, -1);
    expect(deadLetters.map((text) => (JSON.parse(text) as LedgerEntry).id)).toEqual([poisoned.id]);
    expect(await harness.redis.llen(`${prefix()}ledger:queue`)).toBe(0);
    await expectLedgerInvariant(harness.prisma);
    expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota).toBe(970n);
    // The mirror no longer counts the refused charge: 970 is available again.
    const mirror = await harness.redis.hgetall(`${prefix()}bal:u:${customer.userId}`);
    expect(Number(mirror.db) - Number(mirror.pending)).toBe(970);

    // Later charges are written as usual.
    await openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST);
    await harness.relay.ledger.flush();
    expect(await consumeLogs(harness.prisma)).toHaveLength(4);
  });
});

describe('Redis failing while a call settles', () => {
  type FailingScript = 'mgSettle' | 'mgRelease';
  type ScriptCommand = (...args: unknown[]) => Promise<unknown>;

  /**
   * Makes the next call of a billing script on the client fail once (`afterRunning`: it ran, only the
   * reply was lost); resolves when that call is made. The settlements of one event-loop turn run as
   * one script call, so this fails every settlement of that turn.
   */
  function failOnce(redis: BillingRedis, script: FailingScript, afterRunning: boolean): Promise<void> {
    const scripts = redis as unknown as Record<FailingScript, ScriptCommand>;
    const original = scripts[script];
    return new Promise((called) => {
      scripts[script] = function (...args: unknown[]) {
        scripts[script] = original;
        called();
        return (async () => {
          if (afterRunning) await original.apply(redis, args);
          throw new Error('Connection is closed.');
        })();
      };
    });
  }

  /**
   * What load does to the connection: Redis answers late, and the client's next commands wait
   * behind the slow one. A BLPOP holds the connection (to be released well within the 2 s socket
   * timeout). Returns the release.
   */
  async function holdConnection(redis: Redis): Promise<() => Promise<void>> {
    const key = `${prefix()}held`;
    const blocked = redis.blpop(key, 0);
    await new Promise((resolve) => setImmediate(resolve));
    return async () => {
      const other = createTestRedis();
      try {
        await other.lpush(key, 'go');
      } finally {
        other.disconnect();
      }
      await blocked;
    };
  }

  async function holds(customer: Customer): Promise<string[]> {
    const mirror = await harness.redis.hgetall(`${prefix()}bal:u:${customer.userId}`);
    return Object.keys(mirror).filter((field) => field.startsWith('h:'));
  }

  beforeEach(async () => {
    await openAiChannel(harness.prisma, upstream.url);
    await harness.reloadCaches();
  });

  it.each([false, true])('retries a failed settlement and charges it exactly once (reply lost after running: %s)', async (afterRunning) => {
    const customer = await createCustomer(harness.prisma, { quota: 1_000, remainQuota: 500 });
    // Streamed slowly (0.8 s): time to arm the failure between the reservation and the settlement.
    upstream.setMode('ok', { chunks: 5, chunkDelayMs: 200 });
    const call = (async () => {
      const stream = await openAiClient(harness, customer.key).completions.create({ ...TEN_QUOTA_REQUEST, stream: true });
      for await (const chunk of stream) void chunk;
    })();
    // Reserved (the upstream is answering): the failure is armed, and the settlement waits behind
    // a slow command, as under load.
    await eventually(() => expect(upstream.requests).toHaveLength(1));
    const settling = failOnce(harness.redis as BillingRedis, 'mgSettle', afterRunning);
    const release = await holdConnection(harness.redis);
    await settling;
    await release();
    await call;
    await eventually(async () => {
      await harness.relay.ledger.flush();
      expect(await consumeLogs(harness.prisma)).toHaveLength(1);
      expect(await holds(customer)).toEqual([]);
    });
    // No second copy arrives later.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await harness.relay.ledger.flush();
    expect((await consumeLogs(harness.prisma)).map((l) => l.quota)).toEqual([-10n]);
    expect((await harness.prisma.token.findUniqueOrThrow({ where: { id: customer.tokenId } })).remainQuota).toBe(490n);
    await expectLedgerInvariant(harness.prisma);
  });

  it('retries a failed release, so the hold does not stay reserved', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 10 });
    upstream.setMode('error500');
    void failOnce(harness.redis as BillingRedis, 'mgRelease', false);
    await expect(openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST)).rejects.toMatchObject({ status: 502 });
    await eventually(async () => expect(await holds(customer)).toEqual([]));
    upstream.setMode('ok', { chunks: 5 });
    // The whole balance is available again.
    await openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST);
  });

  it('applies waiting retries when the relay shuts down', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 1_000 });
    const second = await startRelay();
    try {
      await second.reloadCaches();
      void failOnce(second.redis as BillingRedis, 'mgSettle', false);
      await openAiClient(second, customer.key).completions.create(TEN_QUOTA_REQUEST);
    } finally {
      await second.close();
    }
    expect((await consumeLogs(harness.prisma)).map((l) => l.quota)).toEqual([-10n]);
  });
});
