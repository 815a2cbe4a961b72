import type { Prisma } from '@modelgate/db';
import { REDEMPTION_STATUS } from '@modelgate/schemas';
import type { Db } from '../../lib/db';

/** One INSERT: a batch is created whole or not at all. */
export async function insertRedemptions(db: Db, rows: Prisma.RedemptionCreateManyInput[]): Promise<void> {
  await db.redemption.createMany({ data: rows });
}

export async function findRedemption(db: Db, id: number) {
  return db.redemption.findUnique({ where: { id } });
}

export async function findRedemptionPage(db: Db, keyword: string | undefined, skip: number, take: number) {
  const where: Prisma.RedemptionWhereInput = keyword ? { name: { contains: keyword, mode: 'insensitive' } } : {};
  const [total, rows] = await Promise.all([
    db.redemption.count({ where }),
    db.redemption.findMany({ where, orderBy: { id: 'desc' }, skip, take }),
  ]);
  return { total, rows };
}

/**
 * Updates a code that is not used, in one conditional statement, so an edit racing a redemption
 * never touches the used code; undefined when no unused code has that id.
 */
export async function updateUnusedRedemption(db: Db, id: number, data: Prisma.RedemptionUpdateManyMutationInput) {
  const rows = await db.redemption.updateManyAndReturn({ where: { id, status: { not: REDEMPTION_STATUS.used } }, data });
  return rows[0];
}

export async function deleteRedemption(db: Db, id: number): Promise<boolean> {
  const { count } = await db.redemption.deleteMany({ where: { id } });
  return count > 0;
}

/**
 * Marks the code used by `userId` if it is enabled and not expired at `now`, in one conditional
 * UPDATE: of any number of concurrent claims of one code, PostgreSQL lets exactly one match
 * (the others re-check the row after its lock and find it used). Undefined when none matched.
 */
export async function claimRedemption(tx: Prisma.TransactionClient, codeHash: string, userId: number, now: Date) {
  const rows = await tx.redemption.updateManyAndReturn({
    where: { codeHash, status: REDEMPTION_STATUS.enabled, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    data: { status: REDEMPTION_STATUS.used, redeemedBy: userId, redeemedAt: now },
    select: { id: true, name: true, codePrefix: true, quota: true },
  });
  return rows[0];
}

/** What makes a code unusable, for the refusal's message. */
export async function findRedemptionStateByHash(db: Db, codeHash: string) {
  return db.redemption.findUnique({ where: { codeHash }, select: { status: true, expiresAt: true } });
}
