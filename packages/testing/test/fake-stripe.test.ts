// The fake Stripe API, driven by the real stripe SDK: it must answer what Stripe answers, or the
// account service's tests prove nothing about Stripe.
import Stripe from 'stripe';
import { type FakeStripe, startFakeStripe } from '../src/fake-stripe';

const SECRET = 'sk_test_fake_stripe';
let fake: FakeStripe;
let stripe: Stripe;

beforeAll(async () => {
  fake = await startFakeStripe({
    apiKey: SECRET,
    prices: { price_usd: { unit_amount: 125, currency: 'usd' }, price_eur: { unit_amount: 90, currency: 'eur' } },
  });
  const { hostname, port } = new URL(fake.url);
  stripe = new Stripe(SECRET, { host: hostname, port: Number(port), protocol: 'http', maxNetworkRetries: 0, telemetry: false });
});
afterAll(() => fake.close());

const session = (lineItems: Stripe.Checkout.SessionCreateParams.LineItem[], idempotencyKey?: string) =>
  stripe.checkout.sessions.create(
    { mode: 'payment', client_reference_id: 'ref_1', line_items: lineItems, success_url: 'http://x/ok', cancel_url: 'http://x/no' },
    idempotencyKey ? { idempotencyKey } : {},
  );

test("a session's amount_total is the price's unit_amount x quantity, in the price's currency", async () => {
  const created = await session([{ price: 'price_usd', quantity: 8 }]);
  expect(created).toMatchObject({ object: 'checkout.session', mode: 'payment', status: 'open', payment_status: 'unpaid', client_reference_id: 'ref_1' });
  expect([created.amount_total, created.amount_subtotal, created.currency]).toEqual([1000, 1000, 'usd']);
  expect(fake.sessions.get(created.id)).toEqual(created);

  const euros = await session([{ price: 'price_eur', quantity: 3 }, { price: 'price_eur', quantity: 1 }]);
  expect([euros.amount_total, euros.currency]).toEqual([360, 'eur']);
});

test('a repeated idempotency key answers the original session', async () => {
  const first = await session([{ price: 'price_usd', quantity: 2 }], 'ref_same');
  const again = await session([{ price: 'price_usd', quantity: 2 }], 'ref_same');
  expect(again.id).toBe(first.id);
});

test.each([
  ['an unknown price', [{ price: 'price_gone', quantity: 1 }], "No such price: 'price_gone'", 'resource_missing'],
  ['prices in two currencies', [{ price: 'price_usd', quantity: 1 }, { price: 'price_eur', quantity: 1 }], 'same currency', undefined],
])('%s: the SDK throws Stripe\'s invalid request error', async (_name, lineItems, message, code) => {
  const attempt = session(lineItems);
  await expect(attempt).rejects.toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
  await expect(attempt).rejects.toMatchObject({ message: expect.stringContaining(message), code });
});
