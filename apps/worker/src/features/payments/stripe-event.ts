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
  /** Minor unit of `currency`; compared with what Stripe answered when the session was created. */
  amount_total: z.number().nullish(),
  currency: z.string().nullish(),
});

/** Why an event was refused: a bounded set, counted by the worker's metrics. */
export const REJECTION_REASONS = [
  'invalid_event',
  'unknown_top_up',
  'not_stripe_top_up',
  'unverifiable',
  'session_mismatch',
  'amount_mismatch',
  'currency_mismatch',
  'already_closed',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** What a paid session reports, to compare with what was kept when it was created. */
export interface PaidSession {
  sessionId: string;
  amountTotal: number | null;
  currency: string | null;
}

/** What a stored event asks of the ledger. */
export type PaymentAction =
  | ({ kind: 'credit'; tradeNo: string; customerId: string | null } & PaidSession)
  | { kind: 'close'; status: 'failed' | 'expired'; tradeNo: string; sessionId: string }
  | { kind: 'ignore'; reason: string }
  | { kind: 'reject'; reason: RejectionReason; note: string };

/** A Map, not an object: an event type such as `constructor` must not find an inherited entry. */
const CLOSING_STATUSES = new Map<string, 'failed' | 'expired'>([
  ['checkout.session.async_payment_failed', 'failed'],
  ['checkout.session.expired', 'expired'],
]);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Maps an event (the raw body Stripe signed) to the action it calls for (docs/api.md 3.5). */
export function actionForStripeEvent(payload: string): PaymentAction {
  const event = stripeEventSchema.safeParse(parseJson(payload));
  if (!event.success) return { kind: 'reject', reason: 'invalid_event', note: 'payload is not a Stripe event' };
  const { type } = event.data;
  const credits = type === 'checkout.session.completed' || type === 'checkout.session.async_payment_succeeded';
  const closingStatus = CLOSING_STATUSES.get(type);
  if (!credits && !closingStatus) return { kind: 'ignore', reason: `event type ${type} is not handled` };

  const session = checkoutSessionSchema.safeParse(event.data.data.object);
  if (!session.success) return { kind: 'reject', reason: 'invalid_event', note: `${type} without a checkout session` };
  const tradeNo = session.data.client_reference_id;
  if (!tradeNo) return { kind: 'reject', reason: 'invalid_event', note: `checkout session ${session.data.id} has no client_reference_id` };
  const sessionId = session.data.id;

  if (closingStatus) return { kind: 'close', status: closingStatus, tradeNo, sessionId };
  // A completed session paid by a delayed method (bank debit) is not paid yet: async_payment_succeeded follows.
  if (type === 'checkout.session.completed' && session.data.payment_status !== 'paid') {
    return { kind: 'ignore', reason: `payment_status is ${session.data.payment_status ?? 'missing'}: waiting for the async payment` };
  }
  const { customer, amount_total: amountTotal, currency } = session.data;
  return {
    kind: 'credit',
    tradeNo,
    sessionId,
    amountTotal: amountTotal ?? null,
    currency: currency ?? null,
    customerId: typeof customer === 'string' ? customer : (customer?.id ?? null),
  };
}

/** What the account service kept of the Checkout Session it created for a top-up. */
export interface KeptSession {
  tradeNo: string;
  providerSessionId: string | null;
  providerAmount: bigint | null;
  providerCurrency: string | null;
}

/**
 * Why a paid session must not be credited to the top-up it names, if it must not (docs/api.md 3.5):
 * it has to be the session created for the top-up, for the same amount_total and currency.
 */
export function paymentMismatch(kept: KeptSession, paid: PaidSession): { reason: RejectionReason; note: string } | undefined {
  const { tradeNo } = kept;
  if (kept.providerSessionId === null || kept.providerAmount === null || kept.providerCurrency === null) {
    return { reason: 'unverifiable', note: `top-up ${tradeNo} has no checkout session amount and currency to compare with: not credited, needs review` };
  }
  if (kept.providerSessionId !== paid.sessionId) {
    return { reason: 'session_mismatch', note: `checkout session ${paid.sessionId} is not the one created for top-up ${tradeNo}: not credited` };
  }
  const session = `checkout session ${paid.sessionId} of top-up ${tradeNo}`;
  if (paid.amountTotal === null || !Number.isSafeInteger(paid.amountTotal) || BigInt(paid.amountTotal) !== kept.providerAmount) {
    return { reason: 'amount_mismatch', note: `amount_total ${paid.amountTotal ?? 'missing'} differs from the ${kept.providerAmount} created for ${session}: not credited` };
  }
  if (paid.currency !== kept.providerCurrency) {
    return { reason: 'currency_mismatch', note: `currency ${paid.currency ?? 'missing'} differs from the ${kept.providerCurrency} created for ${session}: not credited` };
  }
  return undefined;
}
