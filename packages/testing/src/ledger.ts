import type { PrismaClient } from '@modelgate/db';

export interface LedgerMismatch {
  userId: number;
  quota: bigint;
  logged: bigint;
}

/** Users whose balance differs from the sum of their log rows' deltas (CONTRACT 2.5): should be none. */
export function ledgerMismatches(prisma: PrismaClient): Promise<LedgerMismatch[]> {
  return prisma.$queryRaw<LedgerMismatch[]>`
    SELECT u.id AS "userId", u.quota, COALESCE(l.total, 0)::bigint AS logged
      FROM users u
      LEFT JOIN (SELECT user_id, SUM(quota) AS total FROM logs GROUP BY user_id) l ON l.user_id = u.id
     WHERE u.quota <> COALESCE(l.total, 0)`;
}
