import type { Prisma } from '@modelgate/db';
import type { Db } from '../../lib/db';

export async function insertChannel(db: Db, data: Prisma.ChannelUncheckedCreateInput) {
  return db.channel.create({ data });
}

export async function findChannel(db: Db, id: number) {
  return db.channel.findUnique({ where: { id } });
}

export async function findChannelPage(db: Db, skip: number, take: number) {
  const [total, rows] = await Promise.all([
    db.channel.count(),
    db.channel.findMany({ orderBy: { id: 'desc' }, skip, take }),
  ]);
  return { total, rows };
}

/** Updates the row, only while it still has `address` when one is given; undefined when no row matched. */
export async function updateChannel(
  db: Db,
  id: number,
  data: Prisma.ChannelUncheckedUpdateManyInput,
  address?: { type: number; baseUrl: string },
) {
  const rows = await db.channel.updateManyAndReturn({ where: { id, ...address }, data });
  return rows[0];
}

/** One DELETE statement, so all of the ids go or none; returns how many rows existed and went. */
export async function deleteChannels(db: Db, ids: number[]): Promise<number> {
  const { count } = await db.channel.deleteMany({ where: { id: { in: ids } } });
  return count;
}

export async function recordTestResult(db: Db, id: number, responseTimeMs: number, testedAt: Date): Promise<void> {
  await db.channel.updateMany({ where: { id }, data: { responseTimeMs, testedAt } });
}
