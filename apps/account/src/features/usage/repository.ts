import { Prisma } from '@modelgate/db';
import type { Db } from '../../lib/db';

export interface UsageFilter {
  /** Unix seconds: the hourly buckets starting from `from` to `to`, both included. */
  from: number;
  to: number;
  /** Width of the summed buckets in seconds (3600 or 86400); every one starts at a multiple of it. */
  bucketSeconds: number;
  userId?: number;
  username?: string;
  modelName?: string;
}

export interface UsageRow {
  /** Unix seconds of the summed bucket's start. */
  bucket: bigint;
  modelName: string;
  username: string;
  requests: bigint;
  promptTokens: bigint;
  completionTokens: bigint;
  quota: bigint;
}

/**
 * The hourly `usage_buckets` (kept by the ledger with the consume rows) summed into buckets of
 * `bucketSeconds` per user and model, sorted by bucket, model and username. Reads no `logs` row.
 */
export function sumUsage(db: Db, filter: UsageFilter): Promise<UsageRow[]> {
  const conditions = [
    Prisma.sql`b.bucket BETWEEN ${filter.from}::bigint AND ${filter.to}::bigint`,
    ...(filter.userId === undefined ? [] : [Prisma.sql`b.user_id = ${filter.userId}::int`]),
    ...(filter.username === undefined ? [] : [Prisma.sql`u.username = ${filter.username}`]),
    ...(filter.modelName === undefined ? [] : [Prisma.sql`b.model_name = ${filter.modelName}`]),
  ];
  return db.$queryRaw<UsageRow[]>`
    SELECT b.bucket - b.bucket % ${filter.bucketSeconds}::bigint AS bucket, b.model_name AS "modelName", u.username,
           sum(b.requests)::bigint AS requests, sum(b.prompt_tokens)::bigint AS "promptTokens",
           sum(b.completion_tokens)::bigint AS "completionTokens", sum(b.quota)::bigint AS quota
      FROM usage_buckets b JOIN users u ON u.id = b.user_id
     WHERE ${Prisma.join(conditions, ' AND ')}
     GROUP BY 1, 2, b.user_id, u.username
     ORDER BY 1, 2, 3`;
}
