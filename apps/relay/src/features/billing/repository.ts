import type { PrismaClient } from '@modelgate/db';
import { LOG_TYPE } from '@modelgate/schemas';
import type { LedgerEntry, WrittenBatch } from './ledger-entry';

const BATCH_TRANSACTION_TIMEOUT_MS = 10_000;

function add(map: Map<number, [number, number]>, id: number, queued: number, taken: number): void {
  const sums = map.get(id);
  if (sums) {
    sums[0] += queued;
    sums[1] += taken;
  } else {
    map.set(id, [queued, taken]);
  }
}

/** Per-id sums as parallel columns (bigint values as text, so no precision is lost on the way). */
function totalsColumns(totals: Map<number, [number, number]>): { ids: number[]; first: string[]; second: string[] } {
  const ids = [...totals.keys()];
  return {
    ids,
    first: ids.map((id) => String(totals.get(id)![0])),
    second: ids.map((id) => String(totals.get(id)![1])),
  };
}

function unique(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function contentOf(entry: LedgerEntry, taken: number): string {
  const ratios = `model ratio ${entry.modelRatio}, completion ratio ${entry.completionRatio}, group ratio ${entry.groupRatio}`;
  return taken === entry.quota ? ratios : `${ratios}; balance ran out: charged ${taken} of ${entry.quota}`;
}

/** A consume row of the `logs` ledger, named as the batch insert reads it (json_to_recordset). */
interface LogRow {
  user_id: number;
  created_at: string;
  content: string;
  username: string;
  token_id: number;
  token_name: string;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time_ms: number;
  first_byte_ms: number | null;
  is_stream: boolean;
  channel_id: number;
  request_id: string;
  other: Record<string, unknown>;
}

function logRowOf(entry: LedgerEntry, taken: number): LogRow {
  return {
    user_id: entry.userId,
    // timestamp(3) columns hold UTC wall time, as Prisma writes them.
    created_at: new Date(entry.createdAt).toISOString().replace('Z', ''),
    content: contentOf(entry, taken),
    username: entry.username,
    token_id: entry.tokenId,
    token_name: entry.tokenName,
    model_name: entry.model,
    quota: -taken,
    prompt_tokens: entry.promptTokens,
    completion_tokens: entry.completionTokens,
    use_time_ms: entry.useTimeMs,
    first_byte_ms: entry.firstByteMs,
    is_stream: entry.isStream,
    channel_id: entry.channelId,
    request_id: entry.requestId,
    other: {
      entry: entry.id,
      group: entry.group,
      model_ratio: entry.modelRatio,
      completion_ratio: entry.completionRatio,
      group_ratio: entry.groupRatio,
    },
  };
}

/** The ledger's PostgreSQL side: balances for the mirrors, and batches written in one transaction. */
export class LedgerRepository {
  constructor(
    private readonly prisma: PrismaClient,
    /** Serialises batch writes with crash recovery across relay instances sharing the database. */
    private readonly advisoryLockName: string,
  ) {}

  async readBalances(userIds: number[], tokenIds: number[]): Promise<{ users: Map<number, bigint>; tokens: Map<number, bigint> }> {
    const [users, tokens] = await Promise.all([
      userIds.length
        ? this.prisma.user.findMany({ where: { id: { in: userIds } }, select: { id: true, quota: true } })
        : Promise.resolve([]),
      tokenIds.length
        ? this.prisma.token.findMany({ where: { id: { in: tokenIds } }, select: { id: true, remainQuota: true } })
        : Promise.resolve([]),
    ]);
    return {
      users: new Map(users.map((u) => [u.id, u.quota])),
      tokens: new Map(tokens.map((t) => [t.id, t.remainQuota])),
    };
  }

  /**
   * Writes a batch: one consume row per entry, and the users', keys' and channels' counters, in one
   * transaction. A balance that shrank meanwhile (an admin edit) is taken down to 0, never below,
   * and the row records what was actually taken, so quota = sum of log deltas still holds.
   */
  async writeBatch(entries: LedgerEntry[]): Promise<WrittenBatch> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRawUnsafe('SELECT pg_advisory_xact_lock(hashtext($1))::text', this.advisoryLockName);
      // Users, then keys, each in id order: one round trip for both sets of row locks.
      const balances = await tx.$queryRawUnsafe<{ kind: 'user' | 'token'; id: number; balance: bigint; unlimited: boolean }[]>(
        `SELECT 'user' AS kind, id, quota AS balance, false AS unlimited
           FROM (SELECT id, quota FROM users WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE) AS u
         UNION ALL
         SELECT 'token', id, remain_quota, unlimited_quota
           FROM (SELECT id, remain_quota, unlimited_quota FROM tokens WHERE id = ANY($2::int[]) ORDER BY id FOR UPDATE) AS t`,
        unique(entries.map((e) => e.userId)),
        unique(entries.map((e) => e.tokenId)),
      );
      const userBalance = new Map<number, number>();
      const tokenBalance = new Map<number, number>();
      for (const row of balances) {
        if (row.kind === 'user') userBalance.set(row.id, Number(row.balance));
        else tokenBalance.set(row.id, row.unlimited ? Number.POSITIVE_INFINITY : Number(row.balance));
      }

      const written: WrittenBatch = { users: new Map(), tokens: new Map(), drainedTokens: [] };
      const rows: LogRow[] = [];
      const userTotals = new Map<number, [number, number]>(); // taken, requests
      const tokenTotals = new Map<number, [number, number]>(); // taken from remain, used
      const channelTotals = new Map<number, [number, number]>();
      for (const entry of entries) {
        // Users are only soft-deleted, so the row is there (their charges are written like any
        // other); were it gone, the log row's foreign key would refuse the entry (dead letter).
        const balance = userBalance.get(entry.userId) ?? 0;
        const queuedOnToken = entry.limitedToken ? entry.quota : 0;
        const taken = Math.min(entry.quota, balance);
        userBalance.set(entry.userId, balance - taken);
        add(written.users, entry.userId, entry.quota, taken);
        add(userTotals, entry.userId, taken, 1);

        const remain = tokenBalance.get(entry.tokenId);
        const takenFromToken = remain === undefined ? 0 : Math.min(taken, remain);
        if (remain !== undefined) {
          tokenBalance.set(entry.tokenId, remain - takenFromToken);
          add(tokenTotals, entry.tokenId, Number.isFinite(remain) ? takenFromToken : 0, taken);
        }
        add(written.tokens, entry.tokenId, queuedOnToken, Number.isFinite(remain ?? 0) ? takenFromToken : 0);
        add(channelTotals, entry.channelId, taken, 0);
        rows.push(logRowOf(entry, taken));
      }
      for (const id of tokenTotals.keys()) {
        if (tokenBalance.get(id)! <= 0) written.drainedTokens.push(id);
      }
      if (rows.length > 0) {
        // One statement for the whole batch: the log rows travel as one JSON parameter (one
        // JSON.stringify here, one parse in PostgreSQL; an array per column had pg escape every
        // element, half the relay's pg time), and the users', keys' and channels' counters change in
        // the same round trip.
        const users = totalsColumns(userTotals);
        const tokens = totalsColumns(tokenTotals);
        const channels = totalsColumns(channelTotals);
        await tx.$executeRawUnsafe(
          `WITH logged AS (
             INSERT INTO logs (user_id, created_at, type, content, username, token_id, token_name, model_name, quota,
               prompt_tokens, completion_tokens, use_time_ms, first_byte_ms, is_stream, channel_id, request_id, other)
             SELECT user_id, created_at, ${LOG_TYPE.consume}, content, username, token_id, token_name, model_name, quota,
               prompt_tokens, completion_tokens, use_time_ms, first_byte_ms, is_stream, channel_id, request_id, other
             FROM json_to_recordset($1::json) AS r(user_id int, created_at timestamp(3), content text, username text,
               token_id int, token_name text, model_name text, quota bigint, prompt_tokens int, completion_tokens int,
               use_time_ms int, first_byte_ms int, is_stream boolean, channel_id int, request_id text, other jsonb)
           ), charged_users AS (
             UPDATE users AS u SET quota = u.quota - v.taken, used_quota = u.used_quota + v.taken,
               request_count = u.request_count + v.requests
             FROM unnest($2::int[], $3::bigint[], $4::bigint[]) AS v(id, taken, requests) WHERE u.id = v.id
           ), charged_tokens AS (
             UPDATE tokens AS t SET remain_quota = t.remain_quota - v.taken, used_quota = t.used_quota + v.used,
               accessed_at = (now() AT TIME ZONE 'UTC')
             FROM unnest($5::int[], $6::bigint[], $7::bigint[]) AS v(id, taken, used) WHERE t.id = v.id
           )
           UPDATE channels AS c SET used_quota = c.used_quota + v.taken
           FROM unnest($8::int[], $9::bigint[]) AS v(id, taken) WHERE c.id = v.id`,
          JSON.stringify(rows),
          users.ids, users.first, users.second,
          tokens.ids, tokens.first, tokens.second,
          channels.ids, channels.first,
        );
      }
      return written;
    }, { timeout: BATCH_TRANSACTION_TIMEOUT_MS, maxWait: BATCH_TRANSACTION_TIMEOUT_MS });
  }

  /**
   * Whether a batch left in processing by a crashed writer was committed. Waits for the advisory
   * lock first, so a writer still inside its transaction finishes before we look.
   */
  async wasWritten(entries: LedgerEntry[]): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRawUnsafe('SELECT pg_advisory_xact_lock(hashtext($1))::text', this.advisoryLockName);
      const found = await tx.$queryRawUnsafe<{ found: boolean }[]>(
        `SELECT EXISTS (SELECT 1 FROM logs WHERE request_id = ANY($1::text[]) AND type = ${LOG_TYPE.consume}
           AND other->>'entry' = ANY($2::text[])) AS found`,
        entries.map((e) => e.requestId),
        entries.map((e) => e.id),
      );
      return found[0]?.found === true;
    }, { timeout: BATCH_TRANSACTION_TIMEOUT_MS, maxWait: BATCH_TRANSACTION_TIMEOUT_MS });
  }
}
