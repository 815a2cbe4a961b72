import { z } from 'zod';
import { STRIPE_PROVIDER } from '../domain';
import { emptyBody, idPathParams, pageQuery, pageSchema, unixTime } from './common';
import type { ApiOperation } from './operation';

/** The largest Stripe top-up, in units (docs/api.md 3.2). */
export const MAX_TOPUP_UNITS = 100_000;

export const stripePayBody = z.strictObject({
  amount: z.number().int(),
  /** new-api's top-up page sends it; Stripe is the only method here. */
  payment_method: z.literal(STRIPE_PROVIDER).optional(),
});

export const PAYMENT_EVENT_STATUSES = ['received', 'processed', 'ignored', 'failed'] as const;
export const paymentEventQuery = z.object({ status: z.enum(PAYMENT_EVENT_STATUSES).optional() });

export const topUpViewSchema = z.object({
  trade_no: z.string(),
  amount: z.number().int(),
  money: z.number(),
  status: z.string(),
  created_at: unixTime,
  completed_at: unixTime.nullable(),
});
export type TopUpView = z.output<typeof topUpViewSchema>;

export const paymentEventViewSchema = z.object({
  id: z.number().int(),
  provider: z.string(),
  event_id: z.string(),
  type: z.string(),
  trade_no: z.string().nullable(),
  status: z.string(),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  received_at: unixTime,
  processed_at: unixTime.nullable(),
});
export type PaymentEventView = z.output<typeof paymentEventViewSchema>;

/** A replayed event and what the queue did with it (a RequeueOutcome of @modelgate/queue). */
export const paymentEventReplaySchema = paymentEventViewSchema.extend({ queue: z.enum(['queued', 'requeued', 'already-queued']) });
export type PaymentEventReplayView = z.output<typeof paymentEventReplaySchema>;

/** Stripe top-ups (docs/api.md 3.2), the webhook intake (3.5) and the operator's view of the inbox. */
export const paymentOperations = [
  {
    method: 'post',
    path: '/api/stripe/webhook',
    auth: 'webhook',
    summary: 'Stripe events, signed (Stripe-Signature); stored, then processed by the worker',
    body: z.looseObject({ id: z.string(), type: z.string() }),
    response: z.object({ received: z.literal(true) }),
    raw: 'application/json',
  },
  {
    method: 'post',
    path: '/api/user/stripe/pay',
    auth: 'user',
    summary: 'Start a Stripe top-up: the checkout link',
    body: stripePayBody,
    response: z.object({ pay_link: z.string(), trade_no: z.string() }),
  },
  { method: 'get', path: '/api/user/topup/self', auth: 'user', summary: 'The caller\'s top-ups', query: pageQuery, response: pageSchema(topUpViewSchema) },
  {
    method: 'get',
    path: '/api/payment/events',
    auth: 'admin',
    summary: 'The payment webhook inbox',
    query: paymentEventQuery.extend(pageQuery.shape),
    response: pageSchema(paymentEventViewSchema),
  },
  {
    method: 'post',
    path: '/api/payment/events/:id/replay',
    auth: 'admin',
    summary: 'Queue a received or failed event again',
    params: idPathParams,
    body: emptyBody,
    response: paymentEventReplaySchema,
  },
] as const satisfies readonly ApiOperation[];
