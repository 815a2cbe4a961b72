// A payment event whose last attempt meets a brief PostgreSQL outage: the outage is not the event's
// fault, so it must not end `failed` (an operator would have to replay it by hand); the sweeper
// queues it again once the database is back and it is credited exactly once.
import { ledgerMismatches, type PrismaClient } from '@modelgate/db';
import type { PaymentWebhookJob, Queue } from '@modelgate/queue';
import { createTestPrisma, createUser, cutTestDatabase, type DatabaseOutage, setOption } from '@modelgate/testing';
import { checkoutEvent } from '@modelgate/testing/fake-stripe';
import { waitFor } from '@modelgate/testing/processes';
import { startInboxSweeper } from '../src/features/payments/sweeper';
import { eventRow, pendingTopUp, QUOTA_PER_UNIT, quotaOf, sessionOf, settledEvent, storeEvent, topUpLogs } from './payment-fixtures';
import { type PaymentWorkerHarness, startPaymentWorkerHarness, testLogger } from './payment-worker-harness';

const logger = testLogger;

let prisma: PrismaClient;
let harness: PaymentWorkerHarness;
let queue: Queue<PaymentWebhookJob>;
/** The outage in progress, if any (from its start): the database comes back just before the worker records the failed attempt. */
let outage: Promise<DatabaseOutage> | undefined;

async function endOutage(): Promise<void> {
  const current = outage;
  outage = undefined;
  await (await current)?.restore();
}

beforeAll(async () => {
  prisma = createTestPrisma();
  await setOption(prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
  // The worker's own client, on the same database; recording a failed attempt (the inbox's only
  // updateMany) first ends the outage: the outage is over by the time the worker looks back.
  const workerPrisma = createTestPrisma().$extends({
    query: {
      paymentEvent: {
        async updateMany({ args, query }) {
          await endOutage();
          return query(args);
        },
      },
    },
  }) as unknown as PrismaClient;
  harness = await startPaymentWorkerHarness(workerPrisma, 1);
  queue = harness.queue;
});

afterAll(async () => {
  await endOutage();
  expect(await ledgerMismatches(prisma)).toEqual([]);
  await harness.close();
  await prisma.$disconnect();
});

test('the last attempt cut off by a database outage leaves the event to the sweeper, which credits it once', async () => {
  const user = await createUser(prisma, { quota: 0 });
  const topUp = await pendingTopUp(prisma, user.id, 5);
  const event = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'paid' });
  await storeEvent(prisma, event);
  const { id: rowId } = await eventRow(prisma, event.id);

  // Hold the inbox row, so the job waits inside its transaction until the database goes away.
  const holder = createTestPrisma();
  let release: () => void = () => undefined;
  const held = holder
    .$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM payment_events WHERE id = ${rowId} FOR UPDATE`;
      await new Promise<void>((resolve) => (release = resolve));
    }, { timeout: 30_000 })
    .catch(() => undefined);
  try {
    await waitFor(() => prisma.$queryRaw<unknown[]>`SELECT 1 FROM payment_events WHERE id = ${rowId} FOR UPDATE SKIP LOCKED`.then((rows) => rows.length === 0), 'the inbox row to be held');
    // One attempt: the first is the last.
    await queue.add(`stripe:${event.id}`, { provider: 'stripe', eventId: event.id }, { jobId: event.id, attempts: 1 });
    await waitFor(
      () => prisma.$queryRaw<{ waiting: bigint }[]>`
        SELECT count(*) AS waiting FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`.then(([row]) => Number(row?.waiting) > 0),
      'the job to wait for the inbox row',
    );

    outage = cutTestDatabase();
    await outage;
    await waitFor(async () => (await queue.getJob(event.id))?.isFailed(), 'the job to give up');
  } finally {
    release();
    await endOutage();
    await held;
    await holder.$disconnect();
  }

  // Not `failed`: the attempt is recorded, the event left for the sweeper, nothing credited yet.
  const row = await eventRow(prisma, event.id);
  expect(row).toMatchObject({ status: 'received', attempts: 1, processedAt: null });
  expect(row.lastError).toMatch(/terminat|connection/i);
  expect(await quotaOf(prisma, user.id)).toBe(0);

  // Its first pass runs at start and queues the event again.
  const sweeper = startInboxSweeper({ prisma, queue, logger, intervalMs: 60_000, minAgeMs: 0 });
  try {
    expect((await settledEvent(prisma, event.id)).status).toBe('processed');
    expect(await sweeper.sweepOnce()).toBe(0);
  } finally {
    await sweeper.stop();
  }
  expect(await quotaOf(prisma, user.id)).toBe(5 * QUOTA_PER_UNIT);
  expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
  expect((await prisma.topUp.findUniqueOrThrow({ where: { id: topUp.id } })).status).toBe('success');
});
