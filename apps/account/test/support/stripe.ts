import { checkoutEvent, type CheckoutEventInput, type FakeStripe, signStripePayload } from '@modelgate/testing/fake-stripe';
import type { Express } from 'express';
import request from 'supertest';
import { expectOk } from './envelope';
import type { LoggedInUser } from './users';

/** Delivers `payload` to the webhook as Stripe does: its content type, signed with `secret` now. */
export function postStripeWebhook(app: Express, payload: string, secret: string) {
  return request(app)
    .post('/api/stripe/webhook')
    .set('Content-Type', 'application/json; charset=utf-8')
    .set('Stripe-Signature', signStripePayload(payload, secret))
    .send(payload);
}

/** A top-up started through the API, and the Checkout Session the fake Stripe created for it. */
export async function startTopUp(user: LoggedInUser, stripe: FakeStripe, amount: number) {
  const { trade_no: tradeNo } = expectOk(await user.agent.post('/api/user/stripe/pay').send({ amount })) as { trade_no: string };
  const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === tradeNo);
  if (!session) throw new Error(`no checkout session was created for ${tradeNo}`);
  return { tradeNo, session };
}

/**
 * A top-up started through the API, and a paid `checkout.session.completed` of its session, as the
 * fake Stripe created it unless `tampered` overrides fields.
 */
export async function startPaidTopUp(user: LoggedInUser, stripe: FakeStripe, amount: number, tampered: Partial<CheckoutEventInput> = {}) {
  const { tradeNo, session } = await startTopUp(user, stripe, amount);
  return { tradeNo, paidEvent: checkoutEvent({ type: 'checkout.session.completed', session, paymentStatus: 'paid', ...tampered }) };
}
