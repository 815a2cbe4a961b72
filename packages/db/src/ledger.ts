// The ledger: the only code that changes a user's balances, and it always appends the `logs` row of
// the change in the same statement, so for every user `quota` = the sum of its rows' `quota`.
// Two forms: one change inside a caller's transaction (account, worker), and the relay's batch of
// consume rows (one statement per batch, whatever its size).
import { LOG_TYPE, type LogType } from '@modelgate/schemas';
import type { Prisma, PrismaClient } from './generated/prisma/client';

/**
 * The `users` columns only this module writes: other code leaves them out of its creates and
 * updates (`Omit<..., UserBalanceField>`), so every change of them comes with its log row.
 */
export type UserBalanceField = 'quota' | 'usedQuota' | 'requestCount' | 'affQuota' | 'affHistoryQuota' | 'affCount';

/** One change of a user's balances, booked with its one log row. */
export interface BalanceChange {
  userId: number;
  /** The log row's type (LOG_TYPE). */
  type: LogType;
  /** The log row's text. */
  content: string;
  /** Signed change of `users.quota`; it is also the log row's `quota`. */
  quota: bigint;
  /** Signed change of `users.aff_quota` (the affiliate balance, apart from `quota`). */
  affQuota?: bigint;
  /** Added to `users.aff_history_quota` (everything ever earned by invitations). */
  affHistoryQuota?: bigint;
  /** Added to `users.aff_count` (invitations). */
  affCount?: number;
  requestId?: string;
  other?: Prisma.InputJsonObject;
}

export interface BalancesAfter {
  username: string;
  quota: bigint;
  affQuota: bigint;
}

/**
 * Applies one change to the user's row and appends its log row, in one statement inside the
 * caller's transaction. The row lock it takes serialises concurrent changes of the same user.
 * Returns the balances after the change, or `undefined` (nothing written) when there is no such
 * user or the change would take `quota` or `aff_quota` below zero. A credit always applies: a user
 * in debt (quota below zero after a charge beyond its reservation) may top up less than the debt.
 */
export async function changeBalance(tx: Prisma.TransactionClient, change: BalanceChange): Promise<BalancesAfter | undefined> {
  const affQuota = change.affQuota ?? 0n;
  const other = change.other === undefined ? null : JSON.stringify(change.other);
  const rows = await tx.$queryRaw<BalancesAfter[]>`
    WITH changed AS (
      UPDATE users
         SET quota = quota + ${change.quota}::bigint,
             aff_quota = aff_quota + ${affQuota}::bigint,
             aff_history_quota = aff_history_quota + ${change.affHistoryQuota ?? 0n}::bigint,
             aff_count = aff_count + ${change.affCount ?? 0}::int,
             updated_at = (now() AT TIME ZONE 'UTC')
       WHERE id = ${change.userId}::int
         AND (${change.quota}::bigint >= 0 OR quota + ${change.quota}::bigint >= 0)
         AND aff_quota + ${affQuota}::bigint >= 0
   RETURNING id, username, quota, aff_quota
    ), logged AS (
      INSERT INTO logs (user_id, created_at, type, content, username, quota, request_id, other)
      SELECT id, (now() AT TIME ZONE 'UTC'), ${change.type}::int, ${change.content}, username, ${change.quota}::bigint,
             ${change.requestId ?? null}::text, ${other}::jsonb
        FROM changed
    )
    SELECT username, quota, aff_quota AS "affQuota" FROM changed`;
  return rows[0];
}

/** One settled request of a consume batch, named as the batch statement reads it (no renaming per row). */
export interface ConsumeRow {
  user_id: number;
  /** UTC wall time, ISO 8601 without the zone (`timestamp(3)` columns hold UTC, as Prisma writes them). */
  created_at: string;
  username: string;
  token_id: number;
  token_name: string;
  model_name: string;
  /** The request's whole charge (>= 0), whatever the balance; its log row's `quota` is the negative of it. */
  charged: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time_ms: number;
  first_byte_ms: number | null;
  is_stream: boolean;
  channel_id: number;
  request_id: string;
  /** Lean: a consume row's `content` is written from it when read (docs/api.md 3.2), not stored. */
  other: object;
}

/** Parallel columns of a key id -> amount map (amounts as text, so no precision is lost on the way). */
function keyColumns(amounts: Map<number, number>): [number[], string[]] {
  const ids = [...amounts.keys()];
  return [ids, ids.map((id) => String(amounts.get(id)))];
}

/**
 * Books a batch of consume rows (type 2) in one statement: inserts the rows and, from those same
 * rows, takes each user's `quota` down by the sum of its charges (`used_quota` up by it,
 * `request_count` up by its row count), adds the charges to each key's and each channel's
 * `used_quota`, and adds the rows' requests, tokens and charges to their hourly `usage_buckets`
 * (per user, UTC hour of `created_at` and model; docs/api.md 3.7 reads them). `keyBalanceTaken` (key id -> amount) comes off limited keys' `remain_quota`.
 * Each key's charges also count towards its budget period (docs/api.md 3.8): `budget_used_quota`
 * starts again from 0 when the current UTC day / week / month is not the one it was counted in.
 * Run it inside the caller's transaction, after locking the users and keys. Charges are booked in
 * full: one beyond a balance takes it below zero (a debt, docs/api.md 2.5).
 * Returns the users whose balance this batch took from at least their warning threshold to below it.
 */
export async function chargeConsumeBatch(tx: Prisma.TransactionClient, rows: ConsumeRow[], keyBalanceTaken: Map<number, number>): Promise<BalanceCrossing[]> {
  if (rows.length === 0) return [];
  const [keyIds, keyTaken] = keyColumns(keyBalanceTaken);
  // The rows travel as one JSON parameter (one JSON.stringify here, one parse in PostgreSQL; an
  // array per column had pg escape every element, half the relay's pg time).
  return tx.$queryRawUnsafe<BalanceCrossing[]>(
    `WITH logged AS (
       INSERT INTO logs (user_id, created_at, type, username, token_id, token_name, model_name, quota,
         prompt_tokens, completion_tokens, use_time_ms, first_byte_ms, is_stream, channel_id, request_id, other)
       SELECT user_id, created_at, ${LOG_TYPE.consume}, username, token_id, token_name, model_name, -charged,
         prompt_tokens, completion_tokens, use_time_ms, first_byte_ms, is_stream, channel_id, request_id, other
       FROM json_to_recordset($1::json) AS r(user_id int, created_at timestamp(3), username text,
         token_id int, token_name text, model_name text, charged bigint, prompt_tokens int, completion_tokens int,
         use_time_ms int, first_byte_ms int, is_stream boolean, channel_id int, request_id text, other jsonb)
       RETURNING user_id, token_id, channel_id, quota, created_at, model_name, prompt_tokens, completion_tokens
     ), counted_usage AS (
       INSERT INTO usage_buckets AS b (user_id, bucket, model_name, requests, prompt_tokens, completion_tokens, quota)
       SELECT user_id, floor(extract(epoch FROM created_at) / 3600)::bigint * 3600, model_name, count(*),
         sum(prompt_tokens), sum(completion_tokens), -sum(quota)
       FROM logged GROUP BY 1, 2, 3
       -- In key order, so concurrent batches meeting on the same buckets wait, never deadlock.
       ORDER BY 1, 2, 3
       ON CONFLICT (user_id, bucket, model_name) DO UPDATE SET requests = b.requests + EXCLUDED.requests,
         prompt_tokens = b.prompt_tokens + EXCLUDED.prompt_tokens,
         completion_tokens = b.completion_tokens + EXCLUDED.completion_tokens, quota = b.quota + EXCLUDED.quota
     ), charged_users AS (
       UPDATE users AS u SET quota = u.quota + s.delta, used_quota = u.used_quota - s.delta,
         request_count = u.request_count + s.requests
       FROM (SELECT user_id, sum(quota)::bigint AS delta, count(*) AS requests FROM logged GROUP BY user_id) AS s
       WHERE u.id = s.user_id
       RETURNING u.id, u.quota, s.delta, u.quota_warning_threshold, u.notify_type
     ), charged_tokens AS (
       UPDATE tokens AS t SET remain_quota = t.remain_quota - COALESCE(v.taken, 0), used_quota = t.used_quota - s.delta,
         budget_used_quota = CASE WHEN t.budget_period_start = date_trunc(t.budget_period, now() AT TIME ZONE 'UTC')
           THEN t.budget_used_quota ELSE 0 END - s.delta,
         budget_period_start = date_trunc(t.budget_period, now() AT TIME ZONE 'UTC'),
         accessed_at = (now() AT TIME ZONE 'UTC')
       FROM (SELECT token_id, sum(quota)::bigint AS delta FROM logged GROUP BY token_id) AS s
         LEFT JOIN unnest($2::int[], $3::bigint[]) AS v(id, taken) ON v.id = s.token_id
       WHERE t.id = s.token_id
     ), charged_channels AS (
       UPDATE channels AS c SET used_quota = c.used_quota - s.delta
       FROM (SELECT channel_id, sum(quota)::bigint AS delta FROM logged GROUP BY channel_id) AS s
       WHERE c.id = s.channel_id
     )
     SELECT id AS "userId", quota - delta AS "before", quota AS "after" FROM charged_users
     WHERE notify_type <> '' AND quota_warning_threshold > 0
       AND quota - delta >= quota_warning_threshold AND quota < quota_warning_threshold`,
    JSON.stringify(rows),
    keyIds,
    keyTaken,
  );
}

/** A user whose balance a consume batch took below the user's warning threshold (docs/api.md 3.8). */
export interface BalanceCrossing {
  userId: number;
  /** The balance before the batch (at least the threshold) and after it (below). */
  before: bigint;
  after: bigint;
}

export interface LedgerMismatch {
  userId: number;
  quota: bigint;
  logged: bigint;
}

/** Users whose `quota` differs from the sum of their log rows' `quota`: there should be none. */
export function ledgerMismatches(prisma: PrismaClient | Prisma.TransactionClient): Promise<LedgerMismatch[]> {
  return prisma.$queryRaw<LedgerMismatch[]>`
    SELECT u.id AS "userId", u.quota, COALESCE(l.total, 0)::bigint AS logged
      FROM users u
      LEFT JOIN (SELECT user_id, SUM(quota) AS total FROM logs GROUP BY user_id) l ON l.user_id = u.id
     WHERE u.quota <> COALESCE(l.total, 0)`;
}
