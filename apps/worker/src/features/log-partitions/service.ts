import type { PrismaClient } from '@modelgate/db';
import { readOptions } from '@modelgate/schemas';
import { maintainLogPartitions, type PartitionChanges } from './repository';

/** The current month's partition and this many after it exist after every run. */
export const MONTHS_AHEAD = 2;
const DAY_MS = 24 * 3600 * 1000;

/**
 * The `logs` partitions of the current month and the next MONTHS_AHEAD (UTC) are created if
 * missing; with LogRetentionDays above 0, the months that ended more than that many days before
 * `now` are dropped whole.
 */
export async function runLogPartitions(prisma: PrismaClient, now = new Date()): Promise<PartitionChanges> {
  const { LogRetentionDays } = await readOptions(prisma);
  const months = Array.from({ length: MONTHS_AHEAD + 1 }, (_, ahead) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead)));
  const cutoff = LogRetentionDays > 0 ? new Date(now.getTime() - LogRetentionDays * DAY_MS) : undefined;
  return maintainLogPartitions(prisma, months, cutoff);
}
