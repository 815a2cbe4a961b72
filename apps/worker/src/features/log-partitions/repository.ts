import type { Prisma, PrismaClient } from '@modelgate/db';
import { LOG_TYPE } from '@modelgate/schemas';

/** `logs_YYYYMM`: the month partition of `logs` starting at `month` (UTC). */
export function partitionName(month: Date): string {
  return `logs_${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** `timestamp(3)` text of a UTC instant: `logs.created_at` holds UTC wall time. */
function timestampText(at: Date): string {
  return at.toISOString().replace('T', ' ').replace('Z', '');
}

function nextMonth(month: Date): Date {
  return new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1));
}

/**
 * Creates the partition of the month starting at `month` unless it exists. It is built apart and
 * attached, taking along any rows the DEFAULT partition holds for that month: attaching locks
 * `logs` less than CREATE ... PARTITION OF (writes go on) and cannot fail on such rows.
 * Returns whether it was created.
 */
async function ensureMonth(tx: Prisma.TransactionClient, month: Date): Promise<boolean> {
  const name = partitionName(month);
  const [existing] = await tx.$queryRawUnsafe<{ found: boolean }[]>('SELECT to_regclass($1) IS NOT NULL AS found', name);
  if (existing?.found) return false;
  const from = timestampText(month);
  const to = timestampText(nextMonth(month));
  await tx.$executeRawUnsafe(`CREATE TABLE "${name}" (LIKE "logs" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await tx.$executeRawUnsafe(
    `WITH moved AS (DELETE FROM "logs_default" WHERE created_at >= $1::timestamp AND created_at < $2::timestamp RETURNING *)
     INSERT INTO "${name}" SELECT * FROM moved`,
    from,
    to,
  );
  await tx.$executeRawUnsafe(`ALTER TABLE "logs" ATTACH PARTITION "${name}" FOR VALUES FROM ('${from}') TO ('${to}')`);
  return true;
}

/**
 * Drops the month partitions that end at or before `cutoff`. The ledger keeps its invariant (a
 * user's `quota` = the sum of its rows' `quota`): each user with a non-zero net amount in them gets
 * one system row with that amount, dated at the start of the oldest month kept. `usage_buckets`
 * is left alone. Returns the dropped partitions' names.
 */
async function dropMonthsEndingBy(tx: Prisma.TransactionClient, cutoff: Date): Promise<string[]> {
  // The month partitions' bounds are in their names (ensureMonth and the migration name them).
  const expired = await tx.$queryRawUnsafe<{ name: string; ends: string }[]>(
    `SELECT name, to_char(ends, 'YYYY-MM-DD HH24:MI:SS') AS ends
       FROM (SELECT c.relname AS name, to_date(substr(c.relname, 6), 'YYYYMM') + interval '1 month' AS ends
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = '"logs"'::regclass AND c.relname ~ '^logs_[0-9]{6}$') AS months
      WHERE ends <= $1::timestamp
      ORDER BY name`,
    timestampText(cutoff),
  );
  const last = expired.at(-1);
  if (!last) return [];
  const keptFrom = last.ends;
  const names = expired.map((partition) => partition.name);
  await tx.$executeRawUnsafe(
    `INSERT INTO logs (user_id, created_at, type, content, username, quota)
     SELECT l.user_id, $1::timestamp, ${LOG_TYPE.system}, $2, u.username, sum(l.quota)
       FROM logs l JOIN users u ON u.id = l.user_id
      WHERE l.tableoid = ANY($3::regclass[])
      GROUP BY l.user_id, u.username HAVING sum(l.quota) <> 0`,
    keptFrom,
    `Net amount of the log rows before ${keptFrom.slice(0, 10)}, removed after LogRetentionDays`,
    names,
  );
  for (const name of names) await tx.$executeRawUnsafe(`DROP TABLE "${name}"`);
  return names;
}

export interface PartitionChanges {
  created: string[];
  dropped: string[];
}

/**
 * Creates the missing partitions of `months` and drops those ending by `cutoff` (none when
 * undefined), in one transaction. Runs of several workers wait for each other on an advisory lock,
 * so the second finds the work done.
 */
export async function maintainLogPartitions(prisma: PrismaClient, months: Date[], cutoff: Date | undefined): Promise<PartitionChanges> {
  return prisma.$transaction(
    async (tx) => {
      await tx.$queryRawUnsafe("SELECT pg_advisory_xact_lock(hashtext('modelgate:logs-partitions'))::text");
      const created: string[] = [];
      for (const month of months) {
        if (await ensureMonth(tx, month)) created.push(partitionName(month));
      }
      const dropped = cutoff === undefined ? [] : await dropMonthsEndingBy(tx, cutoff);
      return { created, dropped };
    },
    { timeout: 120_000, maxWait: 120_000 },
  );
}
