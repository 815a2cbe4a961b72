import { Prisma } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { describeError, withTimeout } from '@modelgate/http';
import { requeuePaymentWebhook, type RequeueOutcome } from '@modelgate/queue';
import { MAX_TOPUP_UNITS, type PaymentEventReplayView, type PaymentEventView, readOptions, STRIPE_PROVIDER, type TopUpView } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { unixSeconds } from '../../lib/clock';
import type { Page, PageRequest } from '../../lib/envelope';
import { randomAlphanumeric } from '../../lib/random';
import {
  attachCheckoutSession,
  failUnstartedTopUp,
  findPayer,
  findPaymentEvent,
  findPaymentEventPage,
  findTopUpPage,
  insertPendingTopUp,
  type PaymentEventRow,
  type TopUpRow,
} from './repository';
import { stripeClient } from './stripe-client';

/** Upper bound of one top-up, in units (USD): keeps amount x QuotaPerUnit and the charge sane. */

/** How long an HTTP request waits for Redis before answering without it. */
export const QUEUE_TIMEOUT_MS = 2_000;

/**
 * docs/api.md 3.2 `POST /api/user/stripe/pay`: a pending top-up first (so the webhook always finds it),
 * then the Checkout Session, whose id, amount_total and currency are kept with the top-up: the worker
 * credits only a payment of that session, amount and currency (docs/api.md 3.5). When Stripe fails the
 * top-up ends `failed` and the user gets a 502. Stripe sends the payer back to the console's Wallet
 * page (it says how the checkout ended) at ServerAddress, never at an address the request named
 * (docs/api.md 3.7): a crafted Host must not send a payer to another site.
 */
export async function startStripeTopUp(deps: AccountDeps, userId: number, amount: number) {
  const options = await readOptions(deps.prisma);
  if (!options.StripeApiSecret || !options.StripePriceId) {
    throw new AppError('service_unavailable', 'Stripe top-up is not configured');
  }
  if (amount < options.StripeMinTopUp) {
    throw new AppError('invalid_request', `amount: must be at least ${options.StripeMinTopUp}`, { param: 'amount' });
  }
  if (amount > MAX_TOPUP_UNITS || amount * options.QuotaPerUnit > Number.MAX_SAFE_INTEGER) {
    throw new AppError('invalid_request', `amount: must be at most ${MAX_TOPUP_UNITS}`, { param: 'amount' });
  }
  const payer = await findPayer(deps.prisma, userId);
  if (!payer) throw new AppError('unauthorized', 'not logged in');

  const tradeNo = `ref_${randomAlphanumeric(32)}`;
  const money = new Prisma.Decimal(options.StripeUnitPrice).mul(amount).toDecimalPlaces(4);
  await insertPendingTopUp(deps.prisma, { userId, tradeNo, amount, money });

  const customer = payer.stripeCustomerId;
  let session;
  try {
    session = await stripeClient(deps.env.STRIPE_API_BASE, options.StripeApiSecret).checkout.sessions.create(
      {
        mode: 'payment',
        client_reference_id: tradeNo,
        line_items: [{ price: options.StripePriceId, quantity: amount }],
        success_url: `${options.ServerAddress}/wallet?checkout=success`,
        cancel_url: `${options.ServerAddress}/wallet?checkout=cancelled`,
        metadata: { trade_no: tradeNo, user_id: String(userId) },
        ...(customer
          ? { customer }
          : { customer_creation: 'always' as const, ...(payer.email ? { customer_email: payer.email } : {}) }),
      },
      { idempotencyKey: tradeNo },
    );
    if (!session.url) throw new Error('checkout session has no url');
  } catch (err) {
    deps.logger.warn({ tradeNo, error: describeError(err) }, 'stripe checkout session not created');
    await failUnstartedTopUp(deps.prisma, tradeNo, 'the Stripe checkout session could not be created');
    throw new AppError('bad_gateway', 'Stripe is unavailable: the top-up was not started and nothing was charged; please try again');
  }
  await attachCheckoutSession(deps.prisma, tradeNo, { id: session.id, amountTotal: session.amount_total, currency: session.currency });
  return { pay_link: session.url, trade_no: tradeNo };
}

function topUpView(row: TopUpRow): TopUpView {
  return {
    trade_no: row.tradeNo,
    amount: Number(row.amount),
    money: row.money.toNumber(),
    status: row.status,
    created_at: unixSeconds(row.createdAt),
    completed_at: unixSeconds(row.completedAt),
  };
}

export async function listOwnTopUps(deps: AccountDeps, userId: number, page: PageRequest): Promise<Page<TopUpView>> {
  const { total, rows } = await findTopUpPage(deps.prisma, userId, page.skip, page.pageSize);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map(topUpView) };
}

/** The trade_no an event refers to, for the operator's view; the payload itself stays in the inbox. */
function tradeNoOf(payload: string): string | null {
  try {
    const reference = (JSON.parse(payload) as { data?: { object?: { client_reference_id?: unknown } } }).data?.object?.client_reference_id;
    return typeof reference === 'string' ? reference : null;
  } catch {
    return null;
  }
}

function paymentEventView(row: PaymentEventRow): PaymentEventView {
  return {
    id: row.id,
    provider: row.provider,
    event_id: row.eventId,
    type: row.type,
    trade_no: tradeNoOf(row.payload),
    status: row.status,
    attempts: row.attempts,
    last_error: row.lastError,
    received_at: unixSeconds(row.receivedAt),
    processed_at: unixSeconds(row.processedAt),
  };
}

export async function listPaymentEvents(deps: AccountDeps, status: string | undefined, page: PageRequest): Promise<Page<PaymentEventView>> {
  const { total, rows } = await findPaymentEventPage(deps.prisma, status, page.skip, page.pageSize);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map(paymentEventView) };
}

/**
 * Puts a stuck or failed event back on the queue (the worker decides again from the inbox row).
 * A processed or ignored event is final: replaying it is refused.
 */
export async function replayPaymentEvent(deps: AccountDeps, id: number): Promise<PaymentEventReplayView> {
  const row = await findPaymentEvent(deps.prisma, id);
  if (!row) throw new AppError('not_found', 'payment event not found');
  if (row.status === 'processed' || row.status === 'ignored') {
    throw new AppError('conflict', `payment event already ${row.status}`);
  }
  if (row.provider !== STRIPE_PROVIDER) throw new AppError('conflict', `no worker handles ${row.provider} events`);
  let outcome: RequeueOutcome;
  try {
    outcome = await withTimeout(
      requeuePaymentWebhook(deps.paymentQueue, { provider: STRIPE_PROVIDER, eventId: row.eventId }),
      QUEUE_TIMEOUT_MS,
      'requeue',
    );
  } catch (err) {
    throw new AppError('service_unavailable', 'the payment queue is unavailable; try again later', { cause: err });
  }
  deps.logger.info({ eventId: row.eventId, outcome }, 'payment event replayed by an operator');
  return { ...paymentEventView(row), queue: outcome };
}
