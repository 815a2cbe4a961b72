import type { PrismaClient } from '@modelgate/db';
import { readOptions, STRIPE_PROVIDER } from '@modelgate/schemas';
import { closePendingTopUp, creditTopUp, findStripeEvent, findTopUp, finishEvent, type Tx, withLockedEvent } from './repository';
import { actionForStripeEvent, type PaymentAction, paymentMismatch, type RejectionReason } from './stripe-event';

/** What processing an event did; `rejected` events end `failed` in the inbox for an operator to see. */
export type PaymentOutcome = 'credited' | 'closed' | 'ignored' | 'rejected' | 'already-done';

export interface PaymentResult {
  outcome: PaymentOutcome;
  note?: string;
  /** Why the event was rejected (outcome `rejected`). */
  rejection?: RejectionReason;
  /** The user whose quota was credited (outcome `credited`). */
  creditedUserId?: number;
}

/** Thrown for a job whose event is not in the inbox: nothing to process, and retrying cannot help. */
export class PaymentEventMissingError extends Error {
  constructor(eventId: string) {
    super(`payment event ${eventId} is not in the inbox`);
    this.name = 'PaymentEventMissingError';
  }
}

const FINISHED = new Set(['processed', 'ignored']);

async function reject(tx: Tx, eventRowId: number, rejection: RejectionReason, note: string): Promise<PaymentResult> {
  await finishEvent(tx, eventRowId, 'failed', note);
  return { outcome: 'rejected', rejection, note };
}

type TopUpAction = Extract<PaymentAction, { kind: 'credit' | 'close' }>;

async function applyTopUpAction(
  tx: Tx,
  event: { rowId: number; eventId: string },
  action: TopUpAction,
  quotaPerUnit: number,
): Promise<PaymentResult> {
  const topUp = await findTopUp(tx, action.tradeNo);
  if (!topUp) return reject(tx, event.rowId, 'unknown_top_up', `unknown trade_no ${action.tradeNo}`);
  if (topUp.provider !== STRIPE_PROVIDER) {
    return reject(tx, event.rowId, 'not_stripe_top_up', `top-up ${action.tradeNo} is a ${topUp.provider} top-up, not a Stripe one`);
  }
  if (action.kind === 'credit') {
    const mismatch = paymentMismatch(topUp, action);
    if (mismatch) {
      // The session created for this top-up was paid with another amount or currency: the top-up
      // can no longer be paid as created, so it ends failed (if still pending). A session that is
      // not this top-up's says nothing about it: only the event is refused.
      if (mismatch.reason === 'amount_mismatch' || mismatch.reason === 'currency_mismatch') {
        await closePendingTopUp(tx, action.tradeNo, 'failed', mismatch.note);
      }
      return reject(tx, event.rowId, mismatch.reason, mismatch.note);
    }
  } else if (topUp.providerSessionId && topUp.providerSessionId !== action.sessionId) {
    return reject(tx, event.rowId, 'session_mismatch', `checkout session ${action.sessionId} is not the one created for top-up ${action.tradeNo}`);
  }

  const closed =
    action.kind === 'credit'
      ? await closePendingTopUp(tx, action.tradeNo, 'success')
      : await closePendingTopUp(tx, action.tradeNo, action.status, action.status === 'failed' ? 'the payment failed at Stripe' : undefined);
  if (closed) {
    if (action.kind === 'credit') {
      await creditTopUp(tx, {
        userId: closed.userId,
        quota: closed.amount * BigInt(quotaPerUnit),
        amount: closed.amount,
        tradeNo: action.tradeNo,
        eventId: event.eventId,
        customerId: action.customerId,
      });
    }
    await finishEvent(tx, event.rowId, 'processed', null);
    return action.kind === 'credit' ? { outcome: 'credited', creditedUserId: closed.userId } : { outcome: 'closed' };
  }

  // Not pending any more: another event (or an earlier run of this one) already settled it.
  const current = (await findTopUp(tx, action.tradeNo))?.status ?? 'missing';
  if (action.kind === 'credit' && current !== 'success') {
    return reject(tx, event.rowId, 'already_closed', `payment succeeded but top-up ${action.tradeNo} is already ${current}: not credited, needs review`);
  }
  await finishEvent(tx, event.rowId, 'processed', null);
  return { outcome: 'already-done', note: `top-up ${action.tradeNo} is already ${current}` };
}

/**
 * Applies one stored Stripe event in a single transaction: the top-up's status change, the credit
 * and its ledger row, and the inbox row's outcome commit together or not at all. Safe to run any
 * number of times, concurrently, in any order with the other events of the same top-up.
 */
export async function processStripeEvent(prisma: PrismaClient, eventId: string): Promise<PaymentResult> {
  const stored = await findStripeEvent(prisma, eventId);
  if (!stored) throw new PaymentEventMissingError(eventId);
  if (FINISHED.has(stored.status)) return { outcome: 'already-done' };

  const action = actionForStripeEvent(stored.payload);
  const quotaPerUnit = action.kind === 'credit' ? (await readOptions(prisma)).QuotaPerUnit : 0;
  return withLockedEvent(prisma, stored.id, async (tx, status) => {
    if (FINISHED.has(status)) return { outcome: 'already-done' };
    switch (action.kind) {
      case 'ignore':
        await finishEvent(tx, stored.id, 'ignored', action.reason);
        return { outcome: 'ignored', note: action.reason };
      case 'reject':
        return reject(tx, stored.id, action.reason, action.note);
      default:
        return applyTopUpAction(tx, { rowId: stored.id, eventId }, action, quotaPerUnit);
    }
  });
}
