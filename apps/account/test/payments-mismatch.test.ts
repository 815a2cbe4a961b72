// End to end, docs/api.md 3.5: top-ups started through the API (fake Stripe), signed webhooks through
// the account service's intake, the worker as its own process. A signed completed session whose
// amount_total or currency differs from what Stripe answered at creation credits nothing: the
// top-up ends failed with the reason, the admin sees it in the payment events, the worker counts it.
import { ledgerMismatches } from '@modelgate/db';
import { metricValue } from '@modelgate/http';
import { createPaymentWebhookQueue, createProducerConnection } from '@modelgate/queue';
import { redisPrefix, setOption, testRedisUrl } from '@modelgate/testing';
import { type FakeStripe, startFakeStripe } from '@modelgate/testing/fake-stripe';
import { type ServiceProcess, startWorkerProcess, waitFor } from '@modelgate/testing/processes';
import type { Express } from 'express';
import { createAccountApp } from '../src/app';
import { createTestAccount, type TestAccount } from './support/app';
import { expectOk } from './support/envelope';
import { postStripeWebhook, startPaidTopUp } from './support/stripe';
import { loggedInUser, ROLE } from './support/users';

jest.setTimeout(60_000);

const API_SECRET = 'sk_test_mismatch';
const WEBHOOK_SECRET = 'whsec_mismatch_test';
const PRICE_ID = 'price_mismatch';
const QUOTA_PER_UNIT = 1_000;
// A queue of this file's own: jobs other test files left in the run's queue never reach this worker.
const prefix = `${redisPrefix()}mismatch:`;

let stripe: FakeStripe;
let account: TestAccount;
let queueConnection: ReturnType<typeof createProducerConnection>;
let queue: ReturnType<typeof createPaymentWebhookQueue>;
let app: Express;
let worker: ServiceProcess | undefined;

beforeAll(async () => {
  stripe = await startFakeStripe({ apiKey: API_SECRET, prices: { [PRICE_ID]: { unit_amount: 125, currency: 'usd' } } });
  account = createTestAccount({ STRIPE_API_BASE: stripe.url });
  await account.reset();
  const options = {
    StripeApiSecret: API_SECRET,
    StripePriceId: PRICE_ID,
    StripeUnitPrice: '1.25',
    StripeWebhookSecret: WEBHOOK_SECRET,
    QuotaPerUnit: String(QUOTA_PER_UNIT),
  };
  for (const [key, value] of Object.entries(options)) await setOption(account.prisma, key, value);
  queueConnection = createProducerConnection(testRedisUrl());
  queue = createPaymentWebhookQueue(queueConnection, prefix);
  app = createAccountApp({ ...account.deps, paymentQueue: queue });
  worker = await startWorkerProcess(testRedisUrl(), { REDIS_PREFIX: prefix });
});

afterAll(async () => {
  if (worker) {
    worker.kill('SIGTERM');
    await worker.exit;
  }
  await queue?.obliterate({ force: true });
  await queue?.close();
  await queueConnection?.quit();
  await account?.close();
  await stripe?.close();
});

async function deliverSigned(event: { payload: string }) {
  expect((await postStripeWebhook(app, event.payload, WEBHOOK_SECRET)).status).toBe(200);
}

function settled(eventId: string) {
  return waitFor(async () => {
    const row = await account.prisma.paymentEvent.findFirst({ where: { eventId } });
    return row && row.status !== 'received' ? row : undefined;
  }, `event ${eventId} to be processed`, 30_000);
}

const topUp = (tradeNo: string) => account.prisma.topUp.findUniqueOrThrow({ where: { tradeNo } });

test('amount_total 1 or currency jpy: nothing credited, top-up failed with the reason, shown to the admin, counted; the matching payment credits once', async () => {
  const payer = await loggedInUser(account);
  const admin = await loggedInUser(account, { role: ROLE.admin });
  const cheap = await startPaidTopUp(payer, stripe, 4, { amountTotal: 1 });
  const yen = await startPaidTopUp(payer, stripe, 4, { currency: 'jpy' });
  const genuine = await startPaidTopUp(payer, stripe, 4);
  expect(stripe.sessions.size).toBe(3);
  expect([...stripe.sessions.values()].map((s) => [s.amount_total, s.currency])).toEqual(Array(3).fill([500, 'usd']));

  await deliverSigned(cheap.paidEvent);
  await deliverSigned(yen.paidEvent);
  // Stripe delivers at least once: the genuine payment arrives three times, two of them at once.
  await deliverSigned(genuine.paidEvent);
  await Promise.all([deliverSigned(genuine.paidEvent), deliverSigned(genuine.paidEvent)]);
  const [cheapRow, yenRow, genuineRow] = await Promise.all([settled(cheap.paidEvent.id), settled(yen.paidEvent.id), settled(genuine.paidEvent.id)]);

  expect(genuineRow.status).toBe('processed');
  expect(await topUp(genuine.tradeNo)).toMatchObject({ status: 'success', failureReason: null });
  expect((await account.prisma.user.findUniqueOrThrow({ where: { id: payer.id } })).quota).toBe(BigInt(4 * QUOTA_PER_UNIT));
  expect(await account.prisma.log.count({ where: { userId: payer.id, type: 1 } })).toBe(1);
  expect(await ledgerMismatches(account.prisma)).toEqual([]);

  const cheapReason = `amount_total 1 differs from the 500 created for checkout session ${(await topUp(cheap.tradeNo)).providerSessionId}`;
  const yenReason = 'currency jpy differs from the usd created for checkout session';
  expect(cheapRow).toMatchObject({ status: 'failed', lastError: expect.stringContaining(cheapReason) });
  expect(yenRow).toMatchObject({ status: 'failed', lastError: expect.stringContaining(yenReason) });
  expect(await topUp(cheap.tradeNo)).toMatchObject({ status: 'failed', failureReason: cheapRow.lastError });
  expect(await topUp(yen.tradeNo)).toMatchObject({ status: 'failed', failureReason: yenRow.lastError });

  // The payer sees which top-ups failed; the admin sees why, in the payment events.
  const own = expectOk(await payer.agent.get('/api/user/topup/self')) as { items: { trade_no: string; status: string }[] };
  expect(Object.fromEntries(own.items.map((item) => [item.trade_no, item.status]))).toEqual({
    [cheap.tradeNo]: 'failed',
    [yen.tradeNo]: 'failed',
    [genuine.tradeNo]: 'success',
  });
  const failed = expectOk(await admin.agent.get('/api/payment/events?status=failed')) as { items: { trade_no: string; last_error: string }[] };
  expect(failed.items.map((item) => [item.trade_no, item.last_error]).sort()).toEqual(
    [[cheap.tradeNo, cheapRow.lastError], [yen.tradeNo, yenRow.lastError]].sort(),
  );

  const metrics = await (await fetch(worker!.readyUrl.replace(/\/readyz$/, '/metrics'))).text();
  const rejected = (reason: string) => metricValue(metrics, 'worker_payments_rejected_total', { provider: 'stripe', reason });
  expect([rejected('amount_mismatch'), rejected('currency_mismatch')]).toEqual([1, 1]);
  expect(metricValue(metrics, 'worker_webhook_events_processed_total', { provider: 'stripe', outcome: 'credited' })).toBe(1);
});
