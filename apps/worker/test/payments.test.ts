import { createPrismaClient, ledgerMismatches, type PrismaClient } from '@modelgate/db';
import { invalidationChannel, type PaymentWebhookJob, type Queue, Redis, requeuePaymentWebhook } from '@modelgate/queue';
import { createTestPrisma, createTestRedis, createUser, redisPrefix, setOption, testDatabaseUrl } from '@modelgate/testing';
import { checkoutEvent, type CheckoutEventInput } from '@modelgate/testing/fake-stripe';
import { waitFor } from '@modelgate/testing/processes';
import request from 'supertest';
import { createWorkerApp } from '../src/app';
import { processStripeEvent } from '../src/features/payments/service';
import { startInboxSweeper } from '../src/features/payments/sweeper';
import { deliver, eventRow, pendingTopUp, QUOTA_PER_UNIT, quotaOf, sessionOf, settledEvent, storeEvent, topUpLogs, UNIT_AMOUNT } from './payment-fixtures';
import { type PaymentWorkerHarness, startPaymentWorkerHarness, testLogger } from './payment-worker-harness';

const logger = testLogger;

let prisma: PrismaClient;
let harness: PaymentWorkerHarness;
let queue: Queue<PaymentWebhookJob>;

beforeAll(async () => {
  prisma = createTestPrisma();
  await setOption(prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
  harness = await startPaymentWorkerHarness(prisma, 4);
  queue = harness.queue;
});

afterAll(async () => {
  // The ledger invariant holds after everything this file did (docs/api.md 2.5).
  expect(await ledgerMismatches(prisma)).toEqual([]);
  await harness.close();
  await prisma.$disconnect();
});

async function payingUser(startingQuota = 0) {
  return createUser(prisma, { quota: startingQuota });
}

type TopUpRow = Awaited<ReturnType<typeof pendingTopUp>>;

/** A paid `checkout.session.completed` of the top-up's own session (its id, amount and currency). */
const completed = (topUp: TopUpRow, extra: Partial<CheckoutEventInput> = {}) =>
  checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'paid', ...extra });

describe('crediting a paid checkout', () => {
  test('completed + paid: top-up success, amount x QuotaPerUnit credited with one type-1 log row, inbox processed', async () => {
    const user = await payingUser(250);
    const topUp = await pendingTopUp(prisma, user.id, 7);
    const event = completed(topUp, { customer: 'cus_test_123' });
    // Relays learn of the credit at once through the cache invalidation channel.
    const subscriber = createTestRedis();
    const invalidations: unknown[] = [];
    subscriber.on('message', (_channel, message) => invalidations.push(JSON.parse(message)));
    await subscriber.subscribe(invalidationChannel(redisPrefix()));

    await deliver(prisma, queue, event);
    const row = await settledEvent(prisma, event.id);
    await waitFor(() => invalidations.length > 0, 'the user invalidation');
    expect(invalidations).toEqual([{ kind: 'user', userId: user.id }]);
    await subscriber.quit();

    expect(row).toMatchObject({ status: 'processed', attempts: 1, lastError: null });
    expect(row.processedAt).toBeInstanceOf(Date);
    const after = await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } });
    expect(after.status).toBe('success');
    expect(after.completedAt).toBeInstanceOf(Date);
    expect(await quotaOf(prisma, user.id)).toBe(250 + 7 * QUOTA_PER_UNIT);
    const logs = await topUpLogs(prisma, user.id);
    expect(logs).toHaveLength(1);
    const [log] = logs;
    expect(Number(log?.quota)).toBe(7 * QUOTA_PER_UNIT);
    expect(log?.content).toContain(topUp.tradeNo);
    expect(log?.requestId).toBe(event.id);
    expect(log?.username).toBe(user.username);
    // The customer Stripe created is remembered, so the next checkout reuses it.
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).stripeCustomerId).toBe('cus_test_123');
  });

  test('the same event delivered 5 times in sequence credits once', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 3);
    const event = completed(topUp);
    for (let i = 0; i < 5; i++) {
      await deliver(prisma, queue, event);
      await settledEvent(prisma, event.id);
      // Re-running the finished job too (what an operator's replay or the sweeper would do).
      await requeuePaymentWebhook(queue, { provider: 'stripe', eventId: event.id });
    }
    await waitFor(async () => (await queue.getJob(event.id))?.isCompleted(), 'the re-run job to complete');

    expect(await quotaOf(prisma, user.id)).toBe(3 * QUOTA_PER_UNIT);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
    expect(await prisma.paymentEvent.count({ where: { eventId: event.id } })).toBe(1);
  });

  test('the same event delivered 20 times concurrently credits once', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 2);
    const event = completed(topUp);

    await Promise.all(Array.from({ length: 20 }, () => deliver(prisma, queue, event)));
    await settledEvent(prisma, event.id);

    expect(await quotaOf(prisma, user.id)).toBe(2 * QUOTA_PER_UNIT);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
  });

  test('20 concurrent runs of one stored event (duplicate jobs, a stalled job re-run) credit once', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 4);
    const event = completed(topUp);
    await storeEvent(prisma, event);

    const results = await Promise.all(Array.from({ length: 20 }, () => processStripeEvent(prisma, event.id)));

    expect(results.filter((r) => r.outcome === 'credited')).toHaveLength(1);
    expect(results.filter((r) => r.outcome !== 'credited').every((r) => r.outcome === 'already-done')).toBe(true);
    expect(await quotaOf(prisma, user.id)).toBe(4 * QUOTA_PER_UNIT);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
    expect((await eventRow(prisma, event.id)).attempts).toBe(1);
  });

  test.each([
    ['async_payment_succeeded before completed', ['checkout.session.async_payment_succeeded', 'checkout.session.completed']],
    ['completed before async_payment_succeeded', ['checkout.session.completed', 'checkout.session.async_payment_succeeded']],
  ])('%s: one credit', async (_name, order) => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 5);
    const events = order.map((type) => checkoutEvent({ type, session: sessionOf(topUp), paymentStatus: 'paid' }));

    for (const event of events) {
      await deliver(prisma, queue, event);
      await settledEvent(prisma, event.id);
    }

    expect((await Promise.all(events.map((e) => eventRow(prisma, e.id)))).map((r) => r.status)).toEqual(['processed', 'processed']);
    expect(await quotaOf(prisma, user.id)).toBe(5 * QUOTA_PER_UNIT);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
  });

  test('both success events delivered at the same time: one credit', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 6);
    const events = ['checkout.session.async_payment_succeeded', 'checkout.session.completed'].map((type) =>
      checkoutEvent({ type, session: sessionOf(topUp), paymentStatus: 'paid' }),
    );
    await Promise.all(events.map((event) => storeEvent(prisma, event)));

    await Promise.all(events.map((event) => processStripeEvent(prisma, event.id)));

    expect(await quotaOf(prisma, user.id)).toBe(6 * QUOTA_PER_UNIT);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
  });

  test('a delayed payment method: completed (unpaid) changes nothing, async_payment_succeeded then credits', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 1);
    const unpaid = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'unpaid' });

    await deliver(prisma, queue, unpaid);
    expect((await settledEvent(prisma, unpaid.id)).status).toBe('ignored');
    expect((await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status).toBe('pending');
    expect(await quotaOf(prisma, user.id)).toBe(0);

    const succeeded = checkoutEvent({ type: 'checkout.session.async_payment_succeeded', session: sessionOf(topUp) });
    await deliver(prisma, queue, succeeded);
    expect((await settledEvent(prisma, succeeded.id)).status).toBe('processed');
    expect(await quotaOf(prisma, user.id)).toBe(QUOTA_PER_UNIT);
  });
});

describe('timestamps', () => {
  test("completed_at is the UTC time of completion, whatever the database session's time zone", async () => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', '-c TimeZone=Asia/Tokyo');
    const tokyo = createPrismaClient({ databaseUrl: url.toString(), maxConnections: 1 });
    try {
      const [setting] = await tokyo.$queryRawUnsafe<{ zone: string }[]>("SELECT current_setting('TimeZone') AS zone");
      expect(setting?.zone).toBe('Asia/Tokyo');
      const user = await payingUser();
      const topUp = await pendingTopUp(prisma, user.id, 1);
      const event = completed(topUp);
      await storeEvent(prisma, event);
      await processStripeEvent(tokyo, event.id);
      const after = await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } });
      expect(after.status).toBe('success');
      // Local Tokyo time read as UTC would be 9 hours off.
      expect(Math.abs(after.completedAt!.getTime() - Date.now())).toBeLessThan(10 * 60_000);
      expect(Math.abs(after.updatedAt.getTime() - Date.now())).toBeLessThan(10 * 60_000);
    } finally {
      await tokyo.$disconnect();
    }
  });
});

describe('top-ups that end without payment', () => {
  test.each([
    ['checkout.session.async_payment_failed', 'failed'],
    ['checkout.session.expired', 'expired'],
  ])('%s -> top-up %s, nothing credited', async (type, status) => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 9);
    const event = checkoutEvent({ type, session: sessionOf(topUp) });

    await deliver(prisma, queue, event);

    expect((await settledEvent(prisma, event.id)).status).toBe('processed');
    const after = await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } });
    expect(after.status).toBe(status);
    expect(after.failureReason).toBe(status === 'failed' ? 'the payment failed at Stripe' : null);
    expect(after.completedAt).toBeInstanceOf(Date);
    expect(await quotaOf(prisma, user.id)).toBe(0);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(0);
  });

  test('expired racing completed: each top-up ends either credited once or expired with the payment flagged', async () => {
    const user = await payingUser();
    const topUps = await Promise.all(Array.from({ length: 8 }, () => pendingTopUp(prisma, user.id, 1)));
    const pairs = topUps.map((topUp) => ({
      topUp,
      paid: completed(topUp),
      expired: checkoutEvent({ type: 'checkout.session.expired', session: sessionOf(topUp) }),
    }));

    // Half the pairs arrive expiry first, half payment first, all at once.
    await Promise.all(
      pairs.flatMap(({ paid, expired }, i) => (i % 2 ? [expired, paid] : [paid, expired]).map((event) => deliver(prisma, queue, event))),
    );
    await Promise.all(pairs.flatMap(({ paid, expired }) => [settledEvent(prisma, paid.id), settledEvent(prisma, expired.id)]));

    let credited = 0;
    for (const { topUp, paid, expired } of pairs) {
      const status = (await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status;
      const credits = await prisma.log.count({ where: { userId: user.id, type: 1, content: { contains: topUp.tradeNo } } });
      const paidRow = await eventRow(prisma, paid.id);
      if (status === 'success') {
        credited += 1;
        expect(credits).toBe(1);
        expect(paidRow.status).toBe('processed');
        expect((await eventRow(prisma, expired.id)).status).toBe('processed');
      } else {
        // The expiry won: nothing is credited and the contradicting payment is left for an operator.
        expect(status).toBe('expired');
        expect(credits).toBe(0);
        expect(paidRow.status).toBe('failed');
        expect(paidRow.lastError).toContain('needs review');
      }
    }
    expect(await quotaOf(prisma, user.id)).toBe(credited * QUOTA_PER_UNIT);
  });
});

describe('events that cannot be processed end visibly failed and credit nothing', () => {
  test('unknown trade_no', async () => {
    const user = await payingUser();
    const event = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_does_not_exist', paymentStatus: 'paid' });

    await deliver(prisma, queue, event);
    const row = await settledEvent(prisma, event.id);

    expect(row.status).toBe('failed');
    expect(row.lastError).toContain('unknown trade_no ref_does_not_exist');
    expect(await prisma.log.count({ where: { type: 1, requestId: event.id } })).toBe(0);
    expect(await quotaOf(prisma, user.id)).toBe(0);
  });

  test('a top-up that is not a Stripe one', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 5, { provider: 'alipay' });
    const event = completed(topUp);

    await deliver(prisma, queue, event);
    const row = await settledEvent(prisma, event.id);

    expect(row.status).toBe('failed');
    expect(row.lastError).toContain('not a Stripe one');
    expect((await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status).toBe('pending');
    expect(await quotaOf(prisma, user.id)).toBe(0);
  });

  test('a session other than the one created for the top-up: the event is refused, the top-up stays payable', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 5, { providerSessionId: 'cs_test_original' });
    const event = completed(topUp, { sessionId: 'cs_test_other' });

    await deliver(prisma, queue, event);

    const row = await settledEvent(prisma, event.id);
    expect(row.status).toBe('failed');
    expect(row.lastError).toContain(`checkout session cs_test_other is not the one created for top-up ${topUp.tradeNo}`);
    expect(await quotaOf(prisma, user.id)).toBe(0);
    expect((await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status).toBe('pending');

    const own = completed(topUp);
    await deliver(prisma, queue, own);
    expect((await settledEvent(prisma, own.id)).status).toBe('processed');
    expect(await quotaOf(prisma, user.id)).toBe(5 * QUOTA_PER_UNIT);
  });

  test('a top-up with no session amount and currency kept (made before they were kept): refused for review, left pending', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 3, { providerAmount: null, providerCurrency: null });
    const event = completed(topUp, { amountTotal: 3 * UNIT_AMOUNT, currency: 'usd' });

    await deliver(prisma, queue, event);

    const row = await settledEvent(prisma, event.id);
    expect(row.status).toBe('failed');
    expect(row.lastError).toContain('no checkout session amount and currency to compare with');
    expect((await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status).toBe('pending');
    expect(await quotaOf(prisma, user.id)).toBe(0);
  });

  test('a session without client_reference_id', async () => {
    const event = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: '', paymentStatus: 'paid' });
    await deliver(prisma, queue, event);
    const row = await settledEvent(prisma, event.id);
    expect(row.status).toBe('failed');
    expect(row.lastError).toContain('no client_reference_id');
  });

  test('a failed event replayed after the operator fixed the cause is credited once', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 2, { provider: 'manual' });
    const event = completed(topUp);
    await deliver(prisma, queue, event);
    expect((await settledEvent(prisma, event.id)).status).toBe('failed');

    await prisma.topUp.update({ where: { id: topUp.id }, data: { provider: 'stripe' } });
    expect(await requeuePaymentWebhook(queue, { provider: 'stripe', eventId: event.id })).toBe('requeued');

    await waitFor(async () => (await eventRow(prisma, event.id)).status === 'processed', 'the replayed event');
    expect(await quotaOf(prisma, user.id)).toBe(2 * QUOTA_PER_UNIT);
    expect((await eventRow(prisma, event.id)).attempts).toBe(2);
  });
});

describe('a paid session whose amount or currency differs from the one created (docs/api.md 3.5)', () => {
  test.each([
    ['amount_total 1', { amountTotal: 1 }, 'amount_total 1 differs from the 875 created for checkout session'],
    ['currency jpy', { currency: 'jpy' }, 'currency jpy differs from the usd created for checkout session'],
    ['no amount_total', { amountTotal: null }, 'amount_total missing differs'],
    ['a fractional amount_total', { amountTotal: 874.5 }, 'amount_total 874.5 differs'],
  ])('%s: nothing credited, the top-up and the event end failed with the reason', async (_name, tampered, reason) => {
    const user = await payingUser(40);
    const topUp = await pendingTopUp(prisma, user.id, 7);
    const event = completed(topUp, tampered);

    await deliver(prisma, queue, event);

    const row = await settledEvent(prisma, event.id);
    expect(row.status).toBe('failed');
    expect(row.lastError).toContain(reason);
    const after = await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } });
    expect(after.status).toBe('failed');
    expect(after.failureReason).toBe(row.lastError);
    expect(after.completedAt).toBeInstanceOf(Date);
    expect(await quotaOf(prisma, user.id)).toBe(40);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(0);

    // Stripe's own event for the session, arriving later, cannot credit a top-up that failed.
    const genuine = completed(topUp);
    await deliver(prisma, queue, genuine);
    expect((await settledEvent(prisma, genuine.id)).lastError).toContain('needs review');
    expect(await quotaOf(prisma, user.id)).toBe(40);
  });

  test('the matching event credits once even with tampered ones around it, before and after, delivered concurrently', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 6);
    const genuine = completed(topUp);
    await deliver(prisma, queue, genuine);
    expect((await settledEvent(prisma, genuine.id)).status).toBe('processed');

    const tampered = [completed(topUp, { amountTotal: 1 }), completed(topUp, { currency: 'jpy' })];
    await Promise.all([...tampered, genuine, genuine].map((event) => deliver(prisma, queue, event)));
    const rows = await Promise.all(tampered.map((event) => settledEvent(prisma, event.id)));

    expect(rows.map((row) => row.status)).toEqual(['failed', 'failed']);
    const after = await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } });
    expect(after).toMatchObject({ status: 'success', failureReason: null });
    expect(await quotaOf(prisma, user.id)).toBe(6 * QUOTA_PER_UNIT);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
  });

  test('20 concurrent runs of a matching and a tampered event of one top-up: at most one credit, never both', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 2);
    const genuine = completed(topUp);
    const tampered = completed(topUp, { amountTotal: 1 });
    await storeEvent(prisma, genuine);
    await storeEvent(prisma, tampered);

    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => processStripeEvent(prisma, (i % 2 ? genuine : tampered).id)));

    expect(results.filter((r) => r.outcome === 'credited').length).toBeLessThanOrEqual(1);
    const status = (await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status;
    const credited = status === 'success' ? 2 * QUOTA_PER_UNIT : 0;
    expect(['success', 'failed']).toContain(status);
    expect(await quotaOf(prisma, user.id)).toBe(credited);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(credited ? 1 : 0);
  });
});

test('other event types are recorded and ignored', async () => {
  const event = checkoutEvent({ type: 'payment_intent.succeeded', clientReferenceId: null });
  await deliver(prisma, queue, event);
  const row = await settledEvent(prisma, event.id);
  expect(row.status).toBe('ignored');
  expect(row.lastError).toContain('payment_intent.succeeded');
});

test.each(['constructor', 'toString', '__proto__'])('an event type named %s is ignored and leaves the top-up pending', async (type) => {
  const user = await payingUser();
  const topUp = await pendingTopUp(prisma, user.id, 3);
  const event = checkoutEvent({ type, session: sessionOf(topUp) });
  await deliver(prisma, queue, event);
  expect((await settledEvent(prisma, event.id)).status).toBe('ignored');
  expect((await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status).toBe('pending');
});

describe('inbox sweeper', () => {
  test('queues events that were stored but never queued (Redis was down), once they are old enough', async () => {
    const user = await payingUser();
    const topUp = await pendingTopUp(prisma, user.id, 8);
    const event = completed(topUp);
    await storeEvent(prisma, event); // stored, never queued
    const sweeper = startInboxSweeper({ prisma, queue, logger, intervalMs: 60_000, minAgeMs: 60_000 });
    try {
      await sweeper.sweepOnce();
      expect(await queue.getJob(event.id)).toBeUndefined(); // too young: its own job may still come

      await prisma.paymentEvent.update({ where: { provider_eventId: { provider: 'stripe', eventId: event.id } }, data: { receivedAt: new Date(Date.now() - 120_000) } });
      expect(await sweeper.sweepOnce()).toBeGreaterThanOrEqual(1);
      expect((await settledEvent(prisma, event.id)).status).toBe('processed');
      expect(await quotaOf(prisma, user.id)).toBe(8 * QUOTA_PER_UNIT);

      expect(await sweeper.sweepOnce()).toBe(0); // processed rows are left alone
    } finally {
      await sweeper.stop();
    }
  });
});

test('readiness reports a Redis or PostgreSQL outage as 503', async () => {
  const redis = createTestRedis();
  const deadRedis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 10 });
  deadRedis.on('error', () => undefined);
  const deadPrisma = createPrismaClient({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/nothing' });
  try {
    expect((await request(createWorkerApp({ logger, prisma, redis })).get('/readyz')).status).toBe(200);
    const noRedis = await request(createWorkerApp({ logger, prisma, redis: deadRedis })).get('/readyz');
    expect(noRedis.status).toBe(503);
    expect(noRedis.body.checks).toEqual({ database: 'ok', redis: 'down' });
    const noDatabase = await request(createWorkerApp({ logger, prisma: deadPrisma, redis })).get('/readyz');
    expect(noDatabase.status).toBe(503);
    expect(noDatabase.body.checks).toEqual({ database: 'down', redis: 'ok' });
  } finally {
    redis.disconnect();
    deadRedis.disconnect();
    await deadPrisma.$disconnect();
  }
});
