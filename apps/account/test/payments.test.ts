import { setOption } from '@modelgate/testing';
import { checkoutEvent, type FakeStripe, startFakeStripe } from '@modelgate/testing/fake-stripe';
import request from 'supertest';
import { createTestAccount, type TestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { postStripeWebhook } from './support/stripe';
import { type LoggedInUser, loggedInUser, ROLE } from './support/users';

const API_SECRET = 'sk_test_modelgate_fake';
const PRICE_ID = 'price_test_credits';

let stripe: FakeStripe;
let account: TestAccount;

beforeAll(async () => {
  // The price as configured at Stripe: USD 1.25 a unit, as StripeUnitPrice says below.
  stripe = await startFakeStripe({ apiKey: API_SECRET, prices: { [PRICE_ID]: { unit_amount: 125, currency: 'usd' } } });
  account = createTestAccount({ STRIPE_API_BASE: stripe.url });
});
beforeEach(async () => {
  await account.reset();
  stripe.requests.length = 0;
  stripe.setFailing(false);
  await configureStripe();
});
afterAll(async () => {
  await account.close();
  await stripe.close();
});

async function configureStripe(overrides: Record<string, string> = {}) {
  const options = { StripeApiSecret: API_SECRET, StripePriceId: PRICE_ID, StripeUnitPrice: '1.25', StripeMinTopUp: '2', ...overrides };
  for (const [key, value] of Object.entries(options)) await setOption(account.prisma, key, value);
}

function pay(user: LoggedInUser, body: unknown) {
  return user.agent.post('/api/user/stripe/pay').send(body as object);
}

interface TopUpItem {
  trade_no: string;
  amount: number;
  money: number;
  status: string;
  created_at: number;
  completed_at: number | null;
}

describe('POST /api/user/stripe/pay', () => {
  test('creates a pending top-up and a Checkout Session for StripePriceId x amount, keeps its id, amount and currency, returns its link', async () => {
    const user = await loggedInUser(account, { email: 'payer@example.com' });

    const data = expectOk(await pay(user, { amount: 8 })) as { pay_link: string; trade_no: string };

    expect(data.trade_no).toMatch(/^ref_[A-Za-z0-9]{32}$/);
    const [call] = stripe.requests;
    expect(stripe.requests).toHaveLength(1);
    expect(call).toMatchObject({ method: 'POST', path: '/v1/checkout/sessions', authorization: `Bearer ${API_SECRET}`, idempotencyKey: data.trade_no });
    expect(call?.form).toMatchObject({
      mode: 'payment',
      client_reference_id: data.trade_no,
      'line_items[0][price]': PRICE_ID,
      'line_items[0][quantity]': '8',
      customer_email: 'payer@example.com',
      customer_creation: 'always',
    });
    expect(call?.form.success_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/wallet\?checkout=success$/);
    expect(call?.form.cancel_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/wallet\?checkout=cancelled$/);
    const [session] = stripe.sessions.values();
    expect(data.pay_link).toBe(session?.url);

    const topUp = await account.prisma.topUp.findUniqueOrThrow({ where: { tradeNo: data.trade_no } });
    expect(topUp).toMatchObject({ userId: user.id, status: 'pending', provider: 'stripe', providerSessionId: session?.id });
    // Stripe's answer: 8 x 125 cents in usd; a payment is credited only for this session, amount and currency.
    expect(session).toMatchObject({ amount_total: 1000, currency: 'usd' });
    expect(topUp).toMatchObject({ providerAmount: 1000n, providerCurrency: 'usd', failureReason: null });
    expect(Number(topUp.amount)).toBe(8);
    expect(topUp.money.toNumber()).toBe(10);
  });

  test('sends the payer back to ServerAddress, whatever Host or X-Forwarded-Host the request named', async () => {
    await setOption(account.prisma, 'ServerAddress', 'https://gateway.example.com');
    const user = await loggedInUser(account);

    expectOk(
      await pay(user, { amount: 2 })
        .set('Host', 'attacker.example')
        .set('X-Forwarded-Host', 'attacker.example')
        .set('X-Forwarded-Proto', 'https'),
    );

    expect(stripe.requests[0]?.form).toMatchObject({
      success_url: 'https://gateway.example.com/wallet?checkout=success',
      cancel_url: 'https://gateway.example.com/wallet?checkout=cancelled',
    });
  });

  test("reuses the user's Stripe customer when known", async () => {
    const user = await loggedInUser(account, { stripeCustomerId: 'cus_known' });
    expectOk(await pay(user, { amount: 2, payment_method: 'stripe' }));
    expect(stripe.requests[0]?.form.customer).toBe('cus_known');
    expect(stripe.requests[0]?.form.customer_creation).toBeUndefined();
  });

  test('every top-up gets its own unguessable trade_no', async () => {
    const user = await loggedInUser(account);
    const results = await Promise.all([2, 3, 4].map(async (amount) => (expectOk(await pay(user, { amount })) as { trade_no: string }).trade_no));
    expect(new Set(results).size).toBe(3);
  });

  test.each([
    [{ amount: 1 }, /amount: must be at least 2/],
    [{ amount: 100_001 }, /amount: must be at most 100000/],
    [{ amount: 2.5 }, /amount/],
    [{ amount: '5' }, /amount/],
    [{}, /amount/],
    [{ amount: 5, user_id: 1 }, /unknown field: user_id/],
  ])('rejects %j with 400 naming the field, and calls Stripe for nothing', async (body, message) => {
    const user = await loggedInUser(account);
    expectFailure(await pay(user, body), 400, 'invalid_request', message);
    expect(stripe.requests).toHaveLength(0);
    expect(await account.prisma.topUp.count()).toBe(0);
  });

  test('needs a logged-in user', async () => {
    const res = await request(account.app).post('/api/user/stripe/pay').send({ amount: 5 });
    expectFailure(res, 401, 'unauthorized');
  });

  test('Stripe not configured: 503, nothing created', async () => {
    await configureStripe({ StripeApiSecret: '' });
    const user = await loggedInUser(account);
    expectFailure(await pay(user, { amount: 5 }), 503, 'service_unavailable', /not configured/);
    expect(await account.prisma.topUp.count()).toBe(0);
  });

  // Typed: inferred from the first entry as `() => void`, the awaited configureStripe calls would look synchronous.
  test.each<[string, () => Promise<void> | void]>([
    ['Stripe is down (500)', () => stripe.setFailing(true)],
    ['Stripe refuses the API key (401)', () => configureStripe({ StripeApiSecret: 'sk_test_revoked' })],
    ['Stripe has no such price (400)', () => configureStripe({ StripePriceId: 'price_deleted_at_stripe' })],
  ])('%s: a clear 502, and the top-up is marked failed', async (_name, breakStripe) => {
    await breakStripe();
    const user = await loggedInUser(account);

    const res = await pay(user, { amount: 5 });

    expectFailure(res, 502, 'bad_gateway', /Stripe is unavailable.*nothing was charged/);
    expect(JSON.stringify(res.body)).not.toMatch(/sk_test|stack|api\.stripe/);
    const [topUp] = await account.prisma.topUp.findMany();
    expect(topUp).toMatchObject({ status: 'failed', failureReason: 'the Stripe checkout session could not be created', providerSessionId: null });
    const list = expectOk(await user.agent.get('/api/user/topup/self')) as { items: TopUpItem[] };
    expect(list.items.map((item) => item.status)).toEqual(['failed']);
  });
});

describe('GET /api/user/topup/self', () => {
  test("lists the user's own top-ups, newest first, paginated", async () => {
    const user = await loggedInUser(account);
    const other = await loggedInUser(account);
    for (const amount of [2, 3, 4]) expectOk(await pay(user, { amount }));
    expectOk(await pay(other, { amount: 9 }));

    const page1 = expectOk(await user.agent.get('/api/user/topup/self?p=1&page_size=2')) as { page: number; page_size: number; total: number; items: TopUpItem[] };
    const page2 = expectOk(await user.agent.get('/api/user/topup/self?p=2&page_size=2')) as { items: TopUpItem[] };

    expect({ page: page1.page, page_size: page1.page_size, total: page1.total }).toEqual({ page: 1, page_size: 2, total: 3 });
    expect([...page1.items, ...page2.items].map((item) => item.amount)).toEqual([4, 3, 2]);
    expect(page1.items[0]).toEqual({
      trade_no: expect.stringMatching(/^ref_/),
      amount: 4,
      money: 5,
      status: 'pending',
      created_at: expect.any(Number),
      completed_at: null,
    });
  });
});

describe('operator view of payment events', () => {
  const WEBHOOK_SECRET = 'whsec_test_operator';

  async function receive(event: { id: string; payload: string }) {
    expect((await postStripeWebhook(account.app, event.payload, WEBHOOK_SECRET)).status).toBe(200);
  }

  beforeEach(() => setOption(account.prisma, 'StripeWebhookSecret', WEBHOOK_SECRET));

  test('admins list events by status with their last error; users may not', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const user = await loggedInUser(account);
    const stuck = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_stuck', paymentStatus: 'paid' });
    const poisoned = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_poisoned', paymentStatus: 'paid' });
    await receive(stuck);
    await receive(poisoned);
    // What the worker writes when an event cannot be processed.
    await account.prisma.paymentEvent.update({
      where: { provider_eventId: { provider: 'stripe', eventId: poisoned.id } },
      data: { status: 'failed', attempts: 1, lastError: 'unknown trade_no ref_poisoned', processedAt: new Date() },
    });

    const all = expectOk(await admin.agent.get('/api/payment/events')) as { total: number; items: Record<string, unknown>[] };
    expect(all.total).toBe(2);
    const failed = expectOk(await admin.agent.get('/api/payment/events?status=failed')) as { total: number; items: Record<string, unknown>[] };
    expect(failed.items).toEqual([
      {
        id: expect.any(Number),
        provider: 'stripe',
        event_id: poisoned.id,
        type: 'checkout.session.completed',
        trade_no: 'ref_poisoned',
        status: 'failed',
        attempts: 1,
        last_error: 'unknown trade_no ref_poisoned',
        received_at: expect.any(Number),
        processed_at: expect.any(Number),
      },
    ]);
    const received = expectOk(await admin.agent.get('/api/payment/events?status=received&p=1&page_size=5')) as { items: { event_id: string }[] };
    expect(received.items.map((item) => item.event_id)).toEqual([stuck.id]);

    expectFailure(await admin.agent.get('/api/payment/events?status=lost'), 400, 'invalid_request', /status/);
    expectFailure(await user.agent.get('/api/payment/events'), 403, 'forbidden');
  });

  test('replay queues a stuck or failed event again; processed events and unknown ids are refused', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const event = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_x', paymentStatus: 'paid' });
    await receive(event);
    const row = await account.prisma.paymentEvent.findFirstOrThrow({ where: { eventId: event.id } });
    const queue = account.deps.paymentQueue;
    // Its job is gone (Redis lost it), and the worker's last word was a failure.
    await (await queue.getJob(event.id))!.remove();
    await account.prisma.paymentEvent.update({ where: { id: row.id }, data: { status: 'failed', lastError: 'unknown trade_no ref_x' } });

    const first = expectOk(await admin.agent.post(`/api/payment/events/${row.id}/replay`)) as { event_id: string; status: string; queue: string };
    expect(first).toMatchObject({ event_id: event.id, status: 'failed', queue: 'queued' });
    expect(await (await queue.getJob(event.id))?.getState()).toBe('waiting');
    const again = expectOk(await admin.agent.post(`/api/payment/events/${row.id}/replay`)) as { queue: string };
    expect(again.queue).toBe('already-queued');

    await account.prisma.paymentEvent.update({ where: { id: row.id }, data: { status: 'processed' } });
    expectFailure(await admin.agent.post(`/api/payment/events/${row.id}/replay`), 409, 'conflict', /already processed/);
    expectFailure(await admin.agent.post('/api/payment/events/999999/replay'), 404, 'not_found');
    const user = await loggedInUser(account);
    expectFailure(await user.agent.post(`/api/payment/events/${row.id}/replay`), 403, 'forbidden');
  });

  test('replay takes no fields: an empty JSON body is fine, unknown fields or a non-JSON body are a 400 that queues nothing', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const event = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_y', paymentStatus: 'paid' });
    await receive(event);
    const row = await account.prisma.paymentEvent.findFirstOrThrow({ where: { eventId: event.id } });
    const queue = account.deps.paymentQueue;
    await (await queue.getJob(event.id))!.remove();
    const replay = () => admin.agent.post(`/api/payment/events/${row.id}/replay`);

    expectFailure(await replay().send({ force: true }), 400, 'invalid_request', /unknown field: force/);
    expectFailure(await replay().set('Content-Type', 'text/plain').send('force=1'), 400, 'invalid_request', /body/);
    expectFailure(await replay().set('Content-Type', 'application/json').send('{"force":'), 400, 'invalid_request', /JSON/);
    expect(await queue.getJob(event.id)).toBeUndefined();
    expect(expectOk(await replay().send({}))).toMatchObject({ event_id: event.id, queue: 'queued' });
  });
});
