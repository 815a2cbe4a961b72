// Shared by the worker's tests: inbox rows and jobs written exactly as the account service's
// webhook intake writes them, pending top-ups as its pay endpoint writes them, and ledger reads.
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '@modelgate/db';
import { enqueuePaymentWebhook, type PaymentWebhookJob, type Queue } from '@modelgate/queue';
import type { CheckoutSessionRef } from '@modelgate/testing/fake-stripe';
import { waitFor } from '@modelgate/testing/processes';

export const QUOTA_PER_UNIT = 1_000;

export function newTradeNo(): string {
  return `ref_${randomBytes(16).toString('hex')}`;
}

/** Cents per unit of the fixtures' Stripe price. */
export const UNIT_AMOUNT = 125;

/**
 * A pending top-up as the pay endpoint leaves it: with the Checkout Session Stripe answered (id,
 * amount_total = UNIT_AMOUNT x amount, usd), unless `fields` say otherwise.
 */
export async function pendingTopUp(
  prisma: PrismaClient,
  userId: number,
  amount: number,
  fields: { provider?: string; providerSessionId?: string | null; providerAmount?: number | null; providerCurrency?: string | null } = {},
) {
  const session = {
    providerSessionId: `cs_test_${randomBytes(12).toString('hex')}`,
    providerAmount: amount * UNIT_AMOUNT,
    providerCurrency: 'usd',
    ...fields,
  };
  return prisma.topUp.create({
    data: {
      userId,
      tradeNo: newTradeNo(),
      amount: BigInt(amount),
      money: (amount * UNIT_AMOUNT) / 100,
      provider: fields.provider ?? 'stripe',
      providerSessionId: session.providerSessionId,
      providerAmount: session.providerAmount === null ? null : BigInt(session.providerAmount),
      providerCurrency: session.providerCurrency,
    },
  });
}

/** The Checkout Session of a top-up, as its webhook events report it. */
export function sessionOf(topUp: { tradeNo: string; providerSessionId: string | null; providerAmount: bigint | null; providerCurrency: string | null }): CheckoutSessionRef {
  return {
    id: topUp.providerSessionId ?? `cs_test_${randomBytes(12).toString('hex')}`,
    client_reference_id: topUp.tradeNo,
    amount_total: topUp.providerAmount === null ? null : Number(topUp.providerAmount),
    currency: topUp.providerCurrency,
  };
}

/** The webhook intake: store the verified event (a duplicate is a no-op), then queue it. */
export async function storeEvent(prisma: PrismaClient, event: { id: string; payload: string }): Promise<void> {
  const { type } = JSON.parse(event.payload) as { type: string };
  await prisma.paymentEvent.createMany({
    data: [{ provider: 'stripe', eventId: event.id, type, payload: event.payload }],
    skipDuplicates: true,
  });
}

export async function deliver(prisma: PrismaClient, queue: Queue<PaymentWebhookJob>, event: { id: string; payload: string }): Promise<void> {
  await storeEvent(prisma, event);
  await enqueuePaymentWebhook(queue, { provider: 'stripe', eventId: event.id });
}

export async function eventRow(prisma: PrismaClient, eventId: string) {
  return prisma.paymentEvent.findUniqueOrThrow({ where: { provider_eventId: { provider: 'stripe', eventId } } });
}

/** Waits until the worker is done with the event (any status but `received`) and returns its row. */
export function settledEvent(prisma: PrismaClient, eventId: string, timeoutMs = 15_000) {
  return waitFor(async () => {
    const row = await eventRow(prisma, eventId);
    return row.status === 'received' ? undefined : row;
  }, `event ${eventId} to be processed`, timeoutMs);
}

/** The top-up log rows of a user: one per credited payment. */
export function topUpLogs(prisma: PrismaClient, userId: number) {
  return prisma.log.findMany({ where: { userId, type: 1 }, orderBy: { id: 'asc' } });
}

export async function quotaOf(prisma: PrismaClient, userId: number): Promise<number> {
  return Number((await prisma.user.findUniqueOrThrow({ where: { id: userId } })).quota);
}
