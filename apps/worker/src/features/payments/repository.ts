import { changeBalance, Prisma, type PrismaClient } from '@modelgate/db';
import { LOG_TYPE, STRIPE_PROVIDER } from '@modelgate/schemas';

export type Tx = Prisma.TransactionClient;

/** Inbox row statuses: `received` until the worker is done with it, then one of the other three. */
export type PaymentEventStatus = 'received' | 'processed' | 'ignored' | 'failed';
export type TopUpStatus = 'pending' | 'success' | 'failed' | 'expired';

export interface StoredPaymentEvent {
  id: number;
  eventId: string;
  type: string;
  payload: string;
  status: string;
}

export function findStripeEvent(prisma: PrismaClient, eventId: string): Promise<StoredPaymentEvent | null> {
  return prisma.paymentEvent.findUnique({
    where: { provider_eventId: { provider: STRIPE_PROVIDER, eventId } },
    select: { id: true, eventId: true, type: true, payload: true, status: true },
  });
}

/**
 * Runs `fn` in one transaction holding the inbox row's lock, so two runs of the same event (a
 * replay while a stalled job is re-run) are serialised and the second sees the first's outcome.
 */
export function withLockedEvent<T>(
  prisma: PrismaClient,
  eventRowId: number,
  fn: (tx: Tx, status: string) => Promise<T>,
): Promise<T> {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ status: string }[]>`
      SELECT status FROM payment_events WHERE id = ${eventRowId} FOR UPDATE`;
    const [row] = rows;
    if (!row) throw new Error(`payment event ${eventRowId} vanished`);
    return fn(tx, row.status);
  }, { timeout: 15_000, maxWait: 10_000 });
}

export interface TopUpRef {
  id: number;
  tradeNo: string;
  userId: number;
  amount: bigint;
  status: string;
  provider: string;
  /** The Checkout Session created for the top-up, as Stripe answered at creation. */
  providerSessionId: string | null;
  providerAmount: bigint | null;
  providerCurrency: string | null;
}

export function findTopUp(tx: Tx, tradeNo: string): Promise<TopUpRef | null> {
  return tx.topUp.findUnique({
    where: { tradeNo },
    select: {
      id: true,
      tradeNo: true,
      userId: true,
      amount: true,
      status: true,
      provider: true,
      providerSessionId: true,
      providerAmount: true,
      providerCurrency: true,
    },
  });
}

/**
 * Moves a top-up out of `pending` (a `failed` one with its reason). The WHERE clause is the
 * exactly-once guard: of any number of concurrent or repeated attempts, only the one whose update
 * matched a pending row returns it.
 */
export async function closePendingTopUp(
  tx: Tx,
  tradeNo: string,
  status: Exclude<TopUpStatus, 'pending'>,
  failureReason?: string,
): Promise<{ userId: number; amount: bigint } | null> {
  const rows = await tx.$queryRaw<{ userId: number; amount: bigint }[]>`
    UPDATE top_ups
       SET status = ${status}, failure_reason = ${failureReason ?? null}::text,
           completed_at = (now() AT TIME ZONE 'UTC'), updated_at = (now() AT TIME ZONE 'UTC')
     WHERE trade_no = ${tradeNo} AND status = 'pending'
 RETURNING user_id AS "userId", amount`;
  return rows[0] ?? null;
}

export interface TopUpCredit {
  userId: number;
  quota: bigint;
  tradeNo: string;
  eventId: string;
  amount: bigint;
  customerId: string | null;
}

/** Adds the quota with its ledger row (type 1), through the ledger module. */
export async function creditTopUp(tx: Tx, credit: TopUpCredit): Promise<void> {
  const credited = await changeBalance(tx, {
    userId: credit.userId,
    type: LOG_TYPE.topup,
    content: `Stripe top-up ${credit.tradeNo}: ${credit.amount} units credited`,
    quota: credit.quota,
    requestId: credit.eventId,
    other: { provider: STRIPE_PROVIDER, trade_no: credit.tradeNo, event_id: credit.eventId },
  });
  // The top-up's foreign key keeps its user (deleted users are only marked so): never expected.
  if (!credited) throw new Error(`user ${credit.userId} of top-up ${credit.tradeNo} not found`);
  // Later checkouts reuse the Stripe customer this payment created.
  if (credit.customerId) {
    await tx.user.updateMany({ where: { id: credit.userId, stripeCustomerId: null }, data: { stripeCustomerId: credit.customerId } });
  }
}

export async function finishEvent(tx: Tx, eventRowId: number, status: Exclude<PaymentEventStatus, 'received'>, note: string | null): Promise<void> {
  await tx.paymentEvent.update({
    where: { id: eventRowId },
    data: { status, processedAt: new Date(), attempts: { increment: 1 }, lastError: note },
  });
}

/**
 * Records a failed attempt outside the aborted transaction. `final` marks the event `failed` for the
 * operator; otherwise it stays `received` and BullMQ retries it. A finished event is left alone.
 */
export async function recordAttemptFailure(prisma: PrismaClient, eventId: string, message: string, final: boolean): Promise<void> {
  await prisma.paymentEvent.updateMany({
    where: { provider: STRIPE_PROVIDER, eventId, status: { in: ['received', 'failed'] } },
    data: { attempts: { increment: 1 }, lastError: message, ...(final ? { status: 'failed', processedAt: new Date() } : {}) },
  });
}

/** Inbox rows still `received` since before `before`: stored while Redis was down, or lost jobs. */
export async function findStaleReceivedEvents(prisma: PrismaClient, before: Date, limit: number): Promise<string[]> {
  const rows = await prisma.paymentEvent.findMany({
    where: { provider: STRIPE_PROVIDER, status: 'received', receivedAt: { lt: before } },
    orderBy: { receivedAt: 'asc' },
    take: limit,
    select: { eventId: true },
  });
  return rows.map((row) => row.eventId);
}
