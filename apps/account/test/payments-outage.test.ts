// End to end through a Redis outage: the account service's webhook intake keeps answering 200
// while Redis is down, and the worker (a real process) credits every payment once Redis is back.
import { ledgerMismatches } from '@modelgate/db';
import { createPaymentWebhookQueue, createProducerConnection } from '@modelgate/queue';
import { redisPrefix, setOption } from '@modelgate/testing';
import { type FakeStripe, startFakeStripe } from '@modelgate/testing/fake-stripe';
import { type ScratchRedis, type ServiceProcess, startScratchRedis, startWorkerProcess, waitFor } from '@modelgate/testing/processes';
import type { Express } from 'express';
import { createAccountApp } from '../src/app';
import { createTestAccount, type TestAccount } from './support/app';
import { postStripeWebhook, startPaidTopUp } from './support/stripe';
import { loggedInUser } from './support/users';

jest.setTimeout(90_000);

const WEBHOOK_SECRET = 'whsec_outage_test';
const QUOTA_PER_UNIT = 1_000;

let stripe: FakeStripe;
let account: TestAccount;
let redis: ScratchRedis;
let queueConnection: ReturnType<typeof createProducerConnection>;
let queue: ReturnType<typeof createPaymentWebhookQueue>;
let app: Express;
let worker: ServiceProcess | undefined;

beforeAll(async () => {
  stripe = await startFakeStripe({ prices: { price_outage: { unit_amount: 100, currency: 'usd' } } });
  account = createTestAccount({ STRIPE_API_BASE: stripe.url });
  await account.reset();
  const options = { StripeApiSecret: 'sk_test_outage', StripePriceId: 'price_outage', StripeWebhookSecret: WEBHOOK_SECRET, QuotaPerUnit: String(QUOTA_PER_UNIT) };
  for (const [key, value] of Object.entries(options)) await setOption(account.prisma, key, value);

  redis = await startScratchRedis();
  queueConnection = createProducerConnection(redis.url);
  queueConnection.on('error', () => undefined);
  queue = createPaymentWebhookQueue(queueConnection, redisPrefix());
  queue.on('error', () => undefined);
  app = createAccountApp({ ...account.deps, paymentQueue: queue });

  worker = await startWorkerProcess(redis.url, { INBOX_SWEEP_INTERVAL_MS: '300', INBOX_SWEEP_MIN_AGE_MS: '1000' });
});

afterAll(async () => {
  if (worker) {
    worker.kill('SIGTERM');
    await worker.exit;
  }
  await queue?.close();
  queueConnection?.disconnect();
  await redis?.stop();
  await account?.close();
  await stripe?.close();
});

function deliverWebhook(event: { payload: string }) {
  return postStripeWebhook(app, event.payload, WEBHOOK_SECRET);
}

async function topUpStatus(tradeNo: string) {
  return (await account.prisma.topUp.findUniqueOrThrow({ where: { tradeNo } })).status;
}

async function quotaOf(userId: number) {
  return Number((await account.prisma.user.findUniqueOrThrow({ where: { id: userId } })).quota);
}

test('webhooks arriving while Redis is down are answered 200 and every payment is credited once after it is back', async () => {
  const alice = await loggedInUser(account);
  const bob = await loggedInUser(account);

  // Redis up: the usual path.
  const first = await startPaidTopUp(alice, stripe, 2);
  expect((await deliverWebhook(first.paidEvent)).status).toBe(200);
  await waitFor(async () => (await topUpStatus(first.tradeNo)) === 'success', 'the first payment to be credited');

  // Redis down: the intake still answers 200 (quickly) and keeps the events.
  await redis.stop();
  const during = [await startPaidTopUp(alice, stripe, 3), await startPaidTopUp(bob, stripe, 4), await startPaidTopUp(bob, stripe, 5)] as const;
  for (const topUp of during) {
    const started = Date.now();
    const res = await deliverWebhook(topUp.paidEvent);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    expect(Date.now() - started).toBeLessThan(5_000);
  }
  const [, redelivered] = during;
  expect((await deliverWebhook(redelivered.paidEvent)).status).toBe(200); // a redelivery changes nothing
  const stored = await account.prisma.paymentEvent.findMany({ where: { eventId: { in: during.map((t) => t.paidEvent.id) } } });
  expect(stored.map((row) => row.status)).toEqual(['received', 'received', 'received']);
  expect(await Promise.all(during.map((t) => topUpStatus(t.tradeNo)))).toEqual(['pending', 'pending', 'pending']);

  // Redis back (empty: the jobs it never got are gone): the worker's sweeper queues the stored events.
  await redis.start();
  for (const topUp of during) {
    await waitFor(async () => (await topUpStatus(topUp.tradeNo)) === 'success', `${topUp.tradeNo} to be credited`, 30_000);
  }

  expect(await quotaOf(alice.id)).toBe((2 + 3) * QUOTA_PER_UNIT);
  expect(await quotaOf(bob.id)).toBe((4 + 5) * QUOTA_PER_UNIT);
  expect(await account.prisma.log.count({ where: { type: 1 } })).toBe(4);
  expect(await account.prisma.paymentEvent.count({ where: { status: { not: 'processed' } } })).toBe(0);
  expect(await ledgerMismatches(account.prisma)).toEqual([]);
});
