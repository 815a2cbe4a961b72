import type { Prisma } from '@modelgate/db';
import type { Db } from '../../lib/db';

export async function insertToken(db: Db, data: Prisma.TokenUncheckedCreateInput) {
  return db.token.create({ data });
}

/** Any user's token: the service decides whether the caller may see it. */
export async function findToken(db: Db, id: number) {
  return db.token.findUnique({ where: { id } });
}

export async function findTokenPageOfUser(db: Db, userId: number, skip: number, take: number) {
  const where = { userId };
  const [total, rows] = await Promise.all([
    db.token.count({ where }),
    db.token.findMany({ where, orderBy: { id: 'desc' }, skip, take }),
  ]);
  return { total, rows };
}

/** Locks the user's token row for the caller's transaction and reads it; undefined when there is none. */
export async function lockTokenOfUser(tx: Prisma.TransactionClient, userId: number, id: number) {
  const locked = await tx.$queryRaw<{ id: number }[]>`SELECT id FROM tokens WHERE id = ${id} AND user_id = ${userId} FOR UPDATE`;
  if (locked.length === 0) return undefined;
  return tx.token.findUniqueOrThrow({ where: { id } });
}

export async function updateTokenById(db: Db, id: number, data: Prisma.TokenUncheckedUpdateInput) {
  return db.token.update({ where: { id }, data });
}

/** Deletes only a token the user owns; returns what the relay cache needs to forget it. */
export async function deleteOwnToken(db: Db, userId: number, id: number) {
  const rows = await db.$queryRaw<{ id: number; key_hash: string }[]>`
    DELETE FROM tokens WHERE id = ${id} AND user_id = ${userId} RETURNING id, key_hash`;
  return rows[0];
}
