import { Prisma, type PrismaClient } from '@modelgate/db';
import { STRIPE_PROVIDER } from '@modelgate/schemas';

export async function findPayer(prisma: PrismaClient, userId: number) {
  return prisma.user.findFirst({ where: { id: userId, deletedAt: null }, select: { email: true, stripeCustomerId: true } });
}

export interface NewTopUp {
  userId: number;
  tradeNo: string;
  amount: number;
  money: Prisma.Decimal;
}

export async function insertPendingTopUp(prisma: PrismaClient, topUp: NewTopUp): Promise<void> {
  await prisma.topUp.create({
    data: { userId: topUp.userId, tradeNo: topUp.tradeNo, amount: BigInt(topUp.amount), money: topUp.money, provider: STRIPE_PROVIDER },
  });
}

/** Stripe's answer at creation, kept so that only a payment of this session, amount and currency is credited. */
export interface CreatedCheckoutSession {
  id: string;
  /** In the currency's minor unit. */
  amountTotal: number | null;
  currency: string | null;
}

export async function attachCheckoutSession(prisma: PrismaClient, tradeNo: string, session: CreatedCheckoutSession): Promise<void> {
  await prisma.topUp.update({
    where: { tradeNo },
    data: {
      providerSessionId: session.id,
      providerAmount: session.amountTotal === null ? null : BigInt(session.amountTotal),
      providerCurrency: session.currency,
    },
  });
}

/** A top-up whose checkout could not be created: it can never be paid, so it ends `failed`. */
export async function failUnstartedTopUp(prisma: PrismaClient, tradeNo: string, reason: string): Promise<void> {
  await prisma.topUp.updateMany({
    where: { tradeNo, status: 'pending', providerSessionId: null },
    data: { status: 'failed', failureReason: reason, completedAt: new Date() },
  });
}

const topUpFields = { tradeNo: true, amount: true, money: true, status: true, createdAt: true, completedAt: true } as const;
export type TopUpRow = Prisma.TopUpGetPayload<{ select: typeof topUpFields }>;

export async function findTopUpPage(prisma: PrismaClient, userId: number, skip: number, take: number) {
  const where = { userId };
  const [total, rows] = await Promise.all([
    prisma.topUp.count({ where }),
    prisma.topUp.findMany({ where, orderBy: { id: 'desc' }, skip, take, select: topUpFields }),
  ]);
  return { total, rows };
}

export interface VerifiedEvent {
  eventId: string;
  type: string;
  payload: string;
}

/** The inbox insert: unique by (provider, event id), so a redelivered event changes nothing. */
export async function storeStripeEvent(prisma: PrismaClient, event: VerifiedEvent): Promise<boolean> {
  const { count } = await prisma.paymentEvent.createMany({
    data: [{ provider: STRIPE_PROVIDER, eventId: event.eventId, type: event.type, payload: event.payload }],
    skipDuplicates: true,
  });
  return count === 1;
}

const eventFields = {
  id: true,
  provider: true,
  eventId: true,
  type: true,
  payload: true,
  status: true,
  attempts: true,
  lastError: true,
  receivedAt: true,
  processedAt: true,
} as const;
export type PaymentEventRow = Prisma.PaymentEventGetPayload<{ select: typeof eventFields }>;

export async function findPaymentEventPage(prisma: PrismaClient, status: string | undefined, skip: number, take: number) {
  const where = status ? { status } : {};
  const [total, rows] = await Promise.all([
    prisma.paymentEvent.count({ where }),
    prisma.paymentEvent.findMany({ where, orderBy: { id: 'desc' }, skip, take, select: eventFields }),
  ]);
  return { total, rows };
}

export async function findPaymentEvent(prisma: PrismaClient, id: number): Promise<PaymentEventRow | null> {
  return prisma.paymentEvent.findUnique({ where: { id }, select: eventFields });
}
