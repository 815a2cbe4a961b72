import type { AdminUsageItem, UsageItem } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { sumUsage, type UsageRow } from './repository';

/** Width of a bucket per `granularity` (docs/api.md 3.7), in seconds. */
export const GRANULARITY_SECONDS = { hour: 3_600, day: 86_400 } as const;
export type Granularity = keyof typeof GRANULARITY_SECONDS;

/** A checked usage query: the range is already whole buckets of `granularity`. */
export interface UsageQuery {
  granularity: Granularity;
  /** Unix seconds: start of the first bucket. */
  start: number;
  /** Unix seconds: last second of the last bucket. */
  end: number;
  username?: string;
  modelName?: string;
}

function itemView(row: UsageRow): UsageItem {
  return {
    bucket: Number(row.bucket),
    model_name: row.modelName,
    requests: Number(row.requests),
    prompt_tokens: Number(row.promptTokens),
    completion_tokens: Number(row.completionTokens),
    quota: Number(row.quota),
  };
}

export interface UsageReport<T> {
  granularity: Granularity;
  start_timestamp: number;
  end_timestamp: number;
  items: T[];
}

function rowsOf(deps: AccountDeps, query: UsageQuery, only: { userId?: number; username?: string; modelName?: string }): Promise<UsageRow[]> {
  return sumUsage(deps.prisma, { from: query.start, to: query.end, bucketSeconds: GRANULARITY_SECONDS[query.granularity], ...only });
}

function reportOf<T>(query: UsageQuery, items: T[]): UsageReport<T> {
  return { granularity: query.granularity, start_timestamp: query.start, end_timestamp: query.end, items };
}

/** The caller's own usage, per bucket and model. */
export async function ownUsage(deps: AccountDeps, userId: number, query: UsageQuery): Promise<UsageReport<UsageItem>> {
  return reportOf(query, (await rowsOf(deps, query, { userId })).map(itemView));
}

/** Everyone's usage (admins), per bucket, model and user, optionally of one user or one model. */
export async function allUsage(deps: AccountDeps, query: UsageQuery): Promise<UsageReport<AdminUsageItem>> {
  const rows = await rowsOf(deps, query, { username: query.username, modelName: query.modelName });
  return reportOf(query, rows.map((row) => ({ ...itemView(row), username: row.username })));
}
