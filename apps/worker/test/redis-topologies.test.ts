// The payment worker on a real Redis Cluster (three masters with a replica each) and a real Sentinel
// setup (master, replica, three sentinels), on connections built as index.ts builds them: Stripe
// events queued through BullMQ credit their top-up once, also after the master holding the queue's
// keys is killed.
import { parseEnv, redisTargetOf } from '@modelgate/config';
import { ledgerMismatches, type PrismaClient } from '@modelgate/db';
import {
  bullPrefix,
  closeRedis,
  createPaymentWebhookQueue,
  createProducerConnection,
  createWorkerConnection,
  type PaymentWebhookJob,
  type Queue,
  type RedisClient,
  withErrorListener,
  type Worker,
} from '@modelgate/queue';
import { createTestPrisma, createUser, redisPrefix, setOption } from '@modelgate/testing';
import { checkoutEvent } from '@modelgate/testing/fake-stripe';
import { waitFor } from '@modelgate/testing/processes';
import { type RedisTopology, startRedisTopology } from '@modelgate/testing/redis-topologies';
import { workerEnvSchema } from '../src/env';
import { startPaymentWorker } from '../src/features/payments/payment-worker';
import { deliver, pendingTopUp, QUOTA_PER_UNIT, quotaOf, sessionOf, settledEvent, topUpLogs } from './payment-fixtures';
import { testLogger } from './payment-worker-harness';

jest.setTimeout(60_000);

let prisma: PrismaClient;
beforeAll(async () => {
  prisma = createTestPrisma();
  await setOption(prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
});
afterAll(() => prisma.$disconnect());

describe.each(['cluster', 'sentinel'] as const)('on a Redis %s', (kind) => {
  let topology: RedisTopology;
  let queueConnection: RedisClient;
  let workerConnection: RedisClient;
  let queue: Queue<PaymentWebhookJob>;
  let worker: Worker<PaymentWebhookJob>;
  const prefix = redisPrefix();

  beforeAll(async () => {
    topology = await startRedisTopology(kind);
    const env = parseEnv(workerEnvSchema, { ...process.env, ...topology.env, REDIS_PREFIX: prefix });
    const target = redisTargetOf(env);
    expect(target.kind).toBe(kind);
    queueConnection = withErrorListener(createProducerConnection(target), () => undefined);
    workerConnection = withErrorListener(createWorkerConnection(target), () => undefined);
    queue = createPaymentWebhookQueue(queueConnection, prefix);
    queue.on('error', () => undefined);
    worker = startPaymentWorker({
      prisma,
      logger: testLogger,
      connection: workerConnection,
      publisher: queueConnection,
      redisPrefix: prefix,
      concurrency: 4,
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
    });
    await worker.waitUntilReady();
  });

  afterAll(async () => {
    await worker?.close(true);
    await queue?.close();
    for (const client of [workerConnection, queueConnection]) if (client) await closeRedis(client);
    await topology?.stop();
  });

  /** Pending top-ups of new users with their paid `checkout.session.completed` events. */
  async function paidTopUps(amounts: number[]) {
    return Promise.all(amounts.map(async (amount) => {
      const user = await createUser(prisma, {});
      const topUp = await pendingTopUp(prisma, user.id, amount);
      return { user, amount, event: checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'paid' }) };
    }));
  }

  /** Each top-up credited once, with one log row, and the ledger consistent. */
  async function expectCreditedOnce(payments: Awaited<ReturnType<typeof paidTopUps>>) {
    for (const { user, amount, event } of payments) {
      expect(await settledEvent(prisma, event.id, 20_000)).toMatchObject({ status: 'processed' });
      // A job run again (its completion lost in a failover) has finished too.
      await waitFor(async () => (await queue.getJob(event.id))?.isCompleted(), `job ${event.id} to complete`, 20_000, 100);
      expect(await quotaOf(prisma, user.id)).toBe(amount * QUOTA_PER_UNIT);
      expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
    }
    expect(await ledgerMismatches(prisma)).toEqual([]);
  }

  it('credits each queued payment once, a duplicate event included, every key of the queue in one slot', async () => {
    expect(bullPrefix(prefix, workerConnection)).toBe(kind === 'cluster' ? `${prefix}{bull}` : `${prefix}bull`);
    const payments = await paidTopUps([2, 3, 5]);
    for (const { event } of payments) await deliver(prisma, queue, event);
    await deliver(prisma, queue, payments[0]!.event);
    await expectCreditedOnce(payments);
  });

  it('carries on after the master holding the queue is killed: new payments credited once, a redelivery not again', async () => {
    const earlier = await paidTopUps([4]);
    await deliver(prisma, queue, earlier[0]!.event);
    await expectCreditedOnce(earlier);

    await topology.failOver(`${bullPrefix(prefix, queueConnection)}:payment-webhooks:wait`);
    const payments = await paidTopUps([1, 6]);
    // Adds fail at once while the producer reconnects to the new master (a webhook answers 5xx and
    // Stripe retries): retry them as Stripe would. The same event id twice stays one job.
    for (const { event } of [...payments, ...earlier, payments[0]!]) {
      await waitFor(async () => {
        await deliver(prisma, queue, event);
        return true;
      }, `event ${event.id} queued after the failover`, 15_000, 200);
    }
    await expectCreditedOnce([...payments, ...earlier]);
  });
});
