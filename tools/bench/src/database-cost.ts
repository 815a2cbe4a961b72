import type { PrismaClient } from '@modelgate/db';

/** Where PostgreSQL stood: its write-ahead log position, and the rows written to each table of the bench's database. */
export interface DatabaseMark {
  walLsn: string;
  rows: Map<string, { inserted: bigint; updated: bigint; deleted: bigint }>;
}

export interface DatabaseCost {
  calls: number;
  walBytes: bigint;
  /** Rows inserted, updated and deleted, by table, most first. */
  tables: { table: string; inserted: bigint; updated: bigint; deleted: bigint }[];
}

export async function markDatabase(prisma: PrismaClient): Promise<DatabaseMark> {
  const [position] = await prisma.$queryRaw<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`;
  const tables = await prisma.$queryRaw<{ table: string; inserted: bigint; updated: bigint; deleted: bigint }[]>`
    SELECT relname AS "table", n_tup_ins AS inserted, n_tup_upd AS updated, n_tup_del AS deleted FROM pg_stat_user_tables`;
  return { walLsn: position!.lsn, rows: new Map(tables.map(({ table, ...counts }) => [table, counts])) };
}

/**
 * What the calls since `before` cost PostgreSQL. The write-ahead log counts every database of the
 * server (the bench's is the only busy one); row counts are the bench database's tables. Backends
 * report their row counts when idle, at most once a second: they are read until they stop moving.
 */
export async function databaseCostSince(prisma: PrismaClient, before: DatabaseMark, calls: number): Promise<DatabaseCost> {
  let after = await markDatabase(prisma);
  for (let reads = 0; reads < 15; reads++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const next = await markDatabase(prisma);
    const moved = [...next.rows].some(([table, counts]) => {
      const last = after.rows.get(table);
      return !last || last.inserted !== counts.inserted || last.updated !== counts.updated || last.deleted !== counts.deleted;
    });
    after = { walLsn: after.walLsn, rows: next.rows };
    if (!moved) break;
  }
  const [difference] = await prisma.$queryRaw<{ bytes: bigint }[]>`SELECT pg_wal_lsn_diff(${after.walLsn}::pg_lsn, ${before.walLsn}::pg_lsn)::bigint AS bytes`;
  const tables = [...after.rows]
    .map(([table, counts]) => {
      const start = before.rows.get(table) ?? { inserted: 0n, updated: 0n, deleted: 0n };
      return { table, inserted: counts.inserted - start.inserted, updated: counts.updated - start.updated, deleted: counts.deleted - start.deleted };
    })
    .filter(({ inserted, updated, deleted }) => inserted + updated + deleted > 0n)
    .sort((a, b) => Number(b.inserted + b.updated + b.deleted - (a.inserted + a.updated + a.deleted)));
  return { calls, walBytes: difference!.bytes, tables };
}

function perCall(count: bigint, calls: number): string {
  return (Number(count) / calls).toFixed(3);
}

/** The report's lines: WAL bytes and rows written per successful call, by table. */
export function renderDatabaseCost({ calls, walBytes, tables }: DatabaseCost): string[] {
  if (calls === 0) return ['no successful call: nothing to divide by'];
  const rows = tables.reduce((sum, { inserted, updated, deleted }) => sum + inserted + updated + deleted, 0n);
  const lines = [
    `${calls} billed calls: WAL ${(Number(walBytes) / calls).toFixed(0)} bytes per call (${(Number(walBytes) / 1048576).toFixed(1)} MiB in all), ` +
      `rows written ${perCall(rows, calls)} per call`,
    '',
    '| table | inserted per call | updated per call | deleted per call |',
    '| --- | ---: | ---: | ---: |',
  ];
  for (const { table, inserted, updated, deleted } of tables) {
    lines.push(`| ${table} | ${perCall(inserted, calls)} | ${perCall(updated, calls)} | ${perCall(deleted, calls)} |`);
  }
  return lines;
}
