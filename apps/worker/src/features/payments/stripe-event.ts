import { z } from 'zod';

/** The part of a Stripe event the worker acts on; the rest of the payload is kept in the inbox. */
const stripeEventSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  data: z.looseObject({ object: z.unknown() }),
});

const checkoutSessionSchema = z.looseObject({
  id: z.string(),
  object: z.literal('checkout.session'),
  client_reference_id: z.string().nullish(),
  payment_status: z.string().nullish(),
  customer: z.union([z.string(), z.looseObject({ id: z.string() })]).nullish(),
});

/** What a stored event asks of the ledger. */
export type PaymentAction =
  | { kind: 'credit'; tradeNo: string; sessionId: string; customerId: string | null }
  | { kind: 'close'; status: 'failed' | 'expired'; tradeNo: string; sessionId: string }
  | { kind: 'ignore'; reason: string }
  | { kind: 'reject'; reason: string };

const CLOSING_TYPES: Record<string, 'failed' | 'expired'> = {
  'checkout.session.async_payment_failed': 'failed',
  'checkout.session.expired': 'expired',
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Maps an event (the raw body Stripe signed) to the action it calls for (CONTRACT 3.5). */
export function actionForStripeEvent(payload: string): PaymentAction {
  const event = stripeEventSchema.safeParse(parseJson(payload));
  if (!event.success) return { kind: 'reject', reason: 'payload is not a Stripe event' };
  const { type } = event.data;
  const credits = type === 'checkout.session.completed' || type === 'checkout.session.async_payment_succeeded';
  if (!credits && !(type in CLOSING_TYPES)) return { kind: 'ignore', reason: `event type ${type} is not handled` };

  const session = checkoutSessionSchema.safeParse(event.data.data.object);
  if (!session.success) return { kind: 'reject', reason: `${type} without a checkout session` };
  const tradeNo = session.data.client_reference_id;
  if (!tradeNo) return { kind: 'reject', reason: `checkout session ${session.data.id} has no client_reference_id` };
  const sessionId = session.data.id;

  if (!credits) return { kind: 'close', status: CLOSING_TYPES[type], tradeNo, sessionId };
  // A completed session paid by a delayed method (bank debit) is not paid yet: async_payment_succeeded follows.
  if (type === 'checkout.session.completed' && session.data.payment_status !== 'paid') {
    return { kind: 'ignore', reason: `payment_status is ${session.data.payment_status ?? 'missing'}: waiting for the async payment` };
  }
  const customer = session.data.customer;
  return { kind: 'credit', tradeNo, sessionId, customerId: typeof customer === 'string' ? customer : (customer?.id ?? null) };
}
