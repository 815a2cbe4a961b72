// docs/api.md 3.9.6: a charge that takes a balance from at least the warning threshold to below it
// queues exactly one balance-warning job for the worker; the ledger never waits for it.
import { createLogger } from '@modelgate/logger';
import { type BalanceWarningJob, createBalanceWarningQueue, createProducerConnection, type Queue, type Redis } from '@modelgate/queue';
import { freePort } from '@modelgate/testing/processes';
import { redisPrefix, testRedisUrl } from '@modelgate/testing';
import { consumeLogs, createCustomer, type Customer, eventually, expectLedgerInvariant, harness, MODEL, relaySuite, resetSuite, startRelay, withOpenAiChannel } from './harness';

// Only explicit flushes write charges, so each test decides what one batch holds.
relaySuite({ LEDGER_FLUSH_INTERVAL_MS: '600000' });

let connection: Redis;
let queue: Queue<BalanceWarningJob>;

beforeAll(() => {
  connection = createProducerConnection(testRedisUrl());
  queue = createBalanceWarningQueue(connection, redisPrefix());
});
afterAll(async () => {
  await queue.close();
  await connection.quit();
});

beforeEach(async () => {
  await resetSuite();
  await withOpenAiChannel();
  await queue.obliterate({ force: true });
});

/** Each call costs exactly 10 quota (5 prompt + 5 completion tokens at unit prices). */
const TEN_QUOTA_REQUEST = { model: MODEL, prompt: [1, 2, 3, 4, 5], max_tokens: 5 };
const THRESHOLD = 55n;

async function charge(customer: Customer, calls: number, url = harness.url): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const response = await fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(TEN_QUOTA_REQUEST),
    });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
  }
}

/** A user with `quota` and a warning by mail below THRESHOLD (or the given settings). */
async function warnedCustomer(quota: number, settings: { notifyType?: string; quotaWarningThreshold?: bigint } = {}): Promise<Customer> {
  const customer = await createCustomer(harness.prisma, { quota });
  await harness.prisma.user.update({
    where: { id: customer.userId },
    data: { notifyType: 'email', quotaWarningThreshold: THRESHOLD, ...settings },
  });
  return customer;
}

async function jobs(): Promise<{ id: string | undefined; data: BalanceWarningJob }[]> {
  const all = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
  return all.map((job) => ({ id: job.id, data: job.data })).sort((a, b) => a.data.crossedAt - b.data.crossedAt);
}

/** Jobs are queued after the batch commits, without the ledger waiting: give them a moment. */
async function settledJobs(count: number) {
  return eventually(async () => {
    const found = await jobs();
    expect(found).toHaveLength(count);
    return found;
  });
}

/** A top-up as the worker books it (balance and ledger row together), then the relay told. */
async function topUp(customer: Customer, amount: bigint): Promise<void> {
  await harness.prisma.$transaction([
    harness.prisma.user.update({ where: { id: customer.userId }, data: { quota: { increment: amount } } }),
    harness.prisma.log.create({ data: { userId: customer.userId, type: 1, quota: amount, content: 'top-up' } }),
  ]);
  await harness.relay.cacheSync.apply({ kind: 'user', userId: customer.userId });
}

describe('balance warnings queued by the ledger', () => {
  it('one job for the batch that crosses the threshold, none for charges above or further below it', async () => {
    const customer = await warnedCustomer(100);
    await charge(customer, 3);
    await harness.relay.ledger.flush();
    // 100 -> 70: still above.
    expect(await jobs()).toEqual([]);

    // 70 -> 40 in one batch of three charges: one crossing.
    await charge(customer, 3);
    await harness.relay.ledger.flush();
    const [job] = await settledJobs(1);
    const logs = await consumeLogs(harness.prisma);
    const lastCharge = logs.at(-1)!.createdAt.getTime();
    // Untraced: no trace context in the job.
    expect(job?.data).toStrictEqual({ userId: customer.userId, before: '70', after: '40', crossedAt: lastCharge });
    expect(job?.id).toBe(`u${customer.userId}-${lastCharge}`);

    // Further charges below the threshold, in two batches: nothing more.
    await charge(customer, 2);
    await harness.relay.ledger.flush();
    await charge(customer, 1);
    await harness.relay.ledger.flush();
    expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota).toBe(10n);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await jobs()).toHaveLength(1);
    await expectLedgerInvariant(harness.prisma);
  });

  it('a top-up back above the threshold, then a new crossing: another job', async () => {
    const customer = await warnedCustomer(60);
    await charge(customer, 1);
    await harness.relay.ledger.flush();
    await settledJobs(1);

    await topUp(customer, 100n);
    // 150 -> 60: above; 60 -> 50: the second crossing.
    await charge(customer, 9);
    await harness.relay.ledger.flush();
    expect(await jobs()).toHaveLength(1);
    await charge(customer, 1);
    await harness.relay.ledger.flush();
    const [first, second] = await settledJobs(2);
    expect(first?.data).toMatchObject({ userId: customer.userId, before: '60', after: '50' });
    expect(second?.data).toMatchObject({ userId: customer.userId, before: '60', after: '50' });
    expect(second?.id).not.toBe(first?.id);
  });

  it('each user crossing in the same batch gets their own job; users without a warning get none', async () => {
    const warned = await Promise.all([warnedCustomer(60), warnedCustomer(60)]);
    const off = await warnedCustomer(60, { notifyType: '' });
    const never = await warnedCustomer(60, { quotaWarningThreshold: 0n });
    for (const customer of [...warned, off, never]) await charge(customer, 1);
    await harness.relay.ledger.flush();
    const found = await settledJobs(2);
    expect(found.map((job) => job.data.userId).sort()).toEqual(warned.map((customer) => customer.userId).sort());
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await jobs()).toHaveLength(2);
  });

  it('books the charges when the queue cannot be reached: the warning is dropped and logged, the ledger goes on', async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'relay', level: 'warn', destination: { write: (line: string) => lines.push(line) } });
    // Its BullMQ connection goes to a port nothing listens on; billing uses the run's Redis.
    const relay = await startRelay(
      { LEDGER_FLUSH_INTERVAL_MS: '600000', REDIS_URL: `redis://127.0.0.1:${await freePort()}` },
      { logger, redisUrl: testRedisUrl() },
    );
    try {
      await relay.reloadCaches();
      const customer = await warnedCustomer(60);
      await charge(customer, 2, relay.url);
      const started = Date.now();
      await relay.relay.ledger.flush();
      expect(Date.now() - started).toBeLessThan(2_000);
      expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota).toBe(40n);
      await charge(customer, 1, relay.url);
      await relay.relay.ledger.flush();
      await expectLedgerInvariant(harness.prisma);
    } finally {
      await relay.close();
    }
    expect(await jobs()).toEqual([]);
    const dropped = lines.map((line) => JSON.parse(line) as { msg: string }).filter((line) => line.msg.startsWith('balance warning not queued'));
    expect(dropped).toHaveLength(1);
  });
});
