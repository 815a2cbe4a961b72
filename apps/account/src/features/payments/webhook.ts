import { describeError, withTimeout } from '@modelgate/http';
import { enqueuePaymentWebhook, PROVIDER_EVENT_ID } from '@modelgate/queue';
import { readOptions, STRIPE_PROVIDER } from '@modelgate/schemas';
import { traceContextOf } from '@modelgate/telemetry';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import Stripe from 'stripe';
import type { AccountDeps } from '../../deps';
import type { AccountMetrics } from '../metrics/metrics';
import { storeStripeEvent } from './repository';
import { QUEUE_TIMEOUT_MS } from './service';

/** Stripe's window, applied both ways: `constructEvent` alone accepts any future timestamp. */
export const SIGNATURE_TOLERANCE_S = 300;
const WEBHOOK_BODY_LIMIT = '1mb';

/** 400 (the delivery is refused) or 503 (the provider should deliver again later). */
function fail(res: Response, metrics: AccountMetrics, status: 400 | 413 | 503, reason: string): void {
  metrics.webhookReceived(status === 503 ? 'unavailable' : 'rejected');
  res.status(status).json({ error: reason });
}

/** The raw bytes, untouched (the signature covers them exactly); parser errors answered in the webhook's shape. */
export function rawWebhookBody(metrics: AccountMetrics): RequestHandler {
  const parse = express.raw({ type: '*/*', limit: WEBHOOK_BODY_LIMIT });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') return fail(res, metrics, 413, `body larger than ${WEBHOOK_BODY_LIMIT}`);
      fail(res, metrics, 400, 'unreadable body');
    });
  };
}

/** The `t=` of a Stripe-Signature header, in unix seconds. */
function signedAt(header: string): number | undefined {
  const match = /(?:^|,)\s*t=(\d{1,12})(?:,|$)/.exec(header);
  return match ? Number(match[1]) : undefined;
}

type Verification = { ok: true; event: { id: string; type: string } } | { ok: false; reason: string };

/** HMAC-SHA256 over `<t>.<raw body>`, any `v1` may match, `t` within 300 s of now either way. */
function verifyStripeSignature(body: Buffer, header: string, secret: string, nowMs: number): Verification {
  const timestamp = signedAt(header);
  if (timestamp === undefined) return { ok: false, reason: 'malformed Stripe-Signature header' };
  if (Math.abs(nowMs / 1000 - timestamp) > SIGNATURE_TOLERANCE_S) {
    return { ok: false, reason: 'signature timestamp outside the tolerance zone' };
  }
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(body, header, secret, SIGNATURE_TOLERANCE_S, undefined, nowMs);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) return { ok: false, reason: 'signature does not match' };
    return { ok: false, reason: 'body is not JSON' };
  }
  const { id, type } = (event ?? {}) as { id?: unknown; type?: unknown };
  if (typeof id !== 'string' || !PROVIDER_EVENT_ID.test(id) || typeof type !== 'string' || type.length === 0 || type.length > 200) {
    return { ok: false, reason: 'not a Stripe event' };
  }
  return { ok: true, event: { id, type } };
}

/**
 * docs/api.md 3.5 `POST /api/stripe/webhook`. A verified event is stored in the inbox before the 200
 * (so it is never lost), then queued; if Redis is down the worker's sweeper queues it later.
 * A database failure answers 503 so that Stripe delivers again.
 */
export function stripeWebhookHandler(deps: AccountDeps) {
  const { metrics } = deps;
  return async (req: Request, res: Response, _next: NextFunction) => {
    if (!req.headers['content-type']) return fail(res, metrics, 400, 'missing content type');
    if (!req.is('application/json')) return fail(res, metrics, 400, 'content type must be application/json');
    const body = req.body as unknown;
    if (!Buffer.isBuffer(body) || body.length === 0) return fail(res, metrics, 400, 'missing body');
    const header = req.headers['stripe-signature'];
    if (typeof header !== 'string' || header.length === 0) return fail(res, metrics, 400, 'missing Stripe-Signature header');

    let secret: string;
    try {
      secret = (await readOptions(deps.prisma)).StripeWebhookSecret;
    } catch (err) {
      deps.logger.error({ requestId: req.requestId, error: describeError(err) }, 'stripe webhook: database unavailable');
      return fail(res, metrics, 503, 'temporarily unavailable');
    }
    if (!secret) return fail(res, metrics, 503, 'webhook secret not configured');

    const verified = verifyStripeSignature(body, header, secret, deps.now ? deps.now() : Date.now());
    if (!verified.ok) {
      deps.logger.warn({ requestId: req.requestId, reason: verified.reason }, 'stripe webhook rejected');
      return fail(res, metrics, 400, verified.reason);
    }
    const { id: eventId, type } = verified.event;

    let stored: boolean;
    try {
      stored = await storeStripeEvent(deps.prisma, { eventId, type, payload: body.toString('utf8') });
    } catch (err) {
      deps.logger.error({ requestId: req.requestId, eventId, error: describeError(err) }, 'stripe webhook: event not stored');
      return fail(res, metrics, 503, 'temporarily unavailable');
    }
    try {
      // The job's span continues this request's trace (when traced).
      await withTimeout(enqueuePaymentWebhook(deps.paymentQueue, { provider: STRIPE_PROVIDER, eventId }, traceContextOf(res)), QUEUE_TIMEOUT_MS, 'enqueue');
    } catch (err) {
      deps.logger.warn({ requestId: req.requestId, eventId, error: describeError(err) }, 'stripe webhook: stored but not queued; the sweeper will queue it');
    }
    deps.logger.info({ requestId: req.requestId, eventId, type, duplicate: !stored }, 'stripe webhook received');
    metrics.webhookReceived(stored ? 'stored' : 'duplicate');
    res.json({ received: true });
  };
}
