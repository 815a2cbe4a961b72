import { pageOf, parseOrThrow } from '@modelgate/http';
import { emptyBody, paymentEventQuery, ROLE, stripePayBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { jsonBody } from '../../lib/json-body';
import { idParam } from '../../lib/params';
import { currentUser, requireUser } from '../auth/require-user';
import { listOwnTopUps, listPaymentEvents, replayPaymentEvent, startStripeTopUp } from './service';
import { rawWebhookBody, stripeWebhookHandler } from './webhook';

/** Stripe top-ups (docs/api.md 3.2), the webhook intake (3.5) and the operator's view of the inbox. */
export function createPaymentRouter(deps: AccountDeps): Router {
  const router = Router();
  // No session and no JSON parser: the signature covers the raw bytes.
  router.post('/stripe/webhook', rawWebhookBody(deps.metrics), stripeWebhookHandler(deps));

  router.post('/user/stripe/pay', requireUser(deps), jsonBody(deps.env.MAX_REQUEST_BODY_MB), async (req, res) => {
    const { amount } = parseOrThrow(stripePayBody, req.body);
    sendData(res, await startStripeTopUp(deps, currentUser(req).id, amount));
  });
  router.get('/user/topup/self', requireUser(deps), async (req, res) => {
    sendData(res, await listOwnTopUps(deps, currentUser(req).id, pageOf(req.query)));
  });

  router.get('/payment/events', requireUser(deps, ROLE.admin), async (req, res) => {
    const status = typeof req.query.status === 'string' && req.query.status !== '' ? req.query.status : undefined;
    const query = parseOrThrow(paymentEventQuery, { status });
    sendData(res, await listPaymentEvents(deps, query.status, pageOf(req.query)));
  });
  router.post('/payment/events/:id/replay', requireUser(deps, ROLE.admin), jsonBody(deps.env.MAX_REQUEST_BODY_MB), async (req, res) => {
    // No body at all is fine; a body that was sent must be a JSON object without fields.
    const sentBody = req.body !== undefined || Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    parseOrThrow(emptyBody, sentBody ? req.body : {});
    sendData(res, await replayPaymentEvent(deps, idParam(req.params.id, 'payment event')));
  });
  return router;
}
