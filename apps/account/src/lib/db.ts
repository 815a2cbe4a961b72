import type { Prisma, PrismaClient } from '@modelgate/db';

/** A repository runs on the client or inside a caller's transaction. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** Prisma's unique-constraint violation: the caller turns it into a 409. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'P2002';
}
