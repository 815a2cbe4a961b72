import type { Prisma } from '@modelgate/db';
import type { Db } from '../../lib/db';

export async function insertToken(db: Db, data: Prisma.TokenUncheckedCreateInput) {
  return db.token.create({ data });
}

export async function findOwnToken(db: Db, userId: number, id: number) {
  return db.token.findFirst({ where: { id, userId } });
}

export async function findOwnTokenPage(db: Db, userId: number, skip: number, take: number) {
  const where = { userId };
  const [total, rows] = await Promise.all([
    db.token.count({ where }),
    db.token.findMany({ where, orderBy: { id: 'desc' }, skip, take }),
  ]);
  return { total, rows };
}

/** Updates only a token the user owns; undefined when there is none with that id. */
export async function updateOwnToken(db: Db, userId: number, id: number, data: Prisma.TokenUncheckedUpdateManyInput) {
  const rows = await db.token.updateManyAndReturn({ where: { id, userId }, data });
  return rows[0];
}

/** Deletes only a token the user owns; returns what the relay cache needs to forget it. */
export async function deleteOwnToken(db: Db, userId: number, id: number) {
  const rows = await db.$queryRaw<{ id: number; key_hash: string }[]>`
    DELETE FROM tokens WHERE id = ${id} AND user_id = ${userId} RETURNING id, key_hash`;
  return rows[0];
}
