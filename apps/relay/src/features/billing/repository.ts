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

/** Consume rows of a batch, column by column (the shape of an `unnest` insert). */
class LogColumns {
  private readonly userIds: number[] = [];
  private readonly createdAt: string[] = [];
  private readonly contents: string[] = [];
  private readonly usernames: string[] = [];
  private readonly tokenIds: number[] = [];
  private readonly tokenNames: string[] = [];
  private readonly models: string[] = [];
  private readonly quotas: string[] = [];
  private readonly promptTokens: number[] = [];
  private readonly completionTokens: number[] = [];
  private readonly useTimeMs: number[] = [];
  private readonly firstByteMs: (number | null)[] = [];
  private readonly streams: boolean[] = [];
  private readonly channelIds: number[] = [];
  private readonly requestIds: string[] = [];
  private readonly others: string[] = [];

  get size(): number {
    return this.userIds.length;
  }

  push(entry: LedgerEntry, taken: number): void {
    this.userIds.push(entry.userId);
    // timestamp(3) columns hold UTC wall time, as Prisma writes them.
    this.createdAt.push(new Date(entry.createdAt).toISOString().replace('Z', ''));
    this.contents.push(contentOf(entry, taken));
    this.usernames.push(entry.username);
    this.tokenIds.push(entry.tokenId);
    this.tokenNames.push(entry.tokenName);
    this.models.push(entry.model);
    this.quotas.push(String(-taken));
    this.promptTokens.push(entry.promptTokens);
    this.completionTokens.push(entry.completionTokens);
    this.useTimeMs.push(entry.useTimeMs);
    this.firstByteMs.push(entry.firstByteMs);
    this.streams.push(entry.isStream);
    this.channelIds.push(entry.channelId);
    this.requestIds.push(entry.requestId);
    this.others.push(JSON.stringify({
      entry: entry.id,
      group: entry.group,
      model_ratio: entry.modelRatio,
      completion_ratio: entry.completionRatio,
      group_ratio: entry.groupRatio,
    }));
  }

  parameters(): unknown[] {
    return [
      this.userIds, this.createdAt, this.userIds.map(() => LOG_TYPE.consume), this.contents, this.usernames,
      this.tokenIds, this.tokenNames, this.models, this.quotas, this.promptTokens, this.completionTokens,
      this.useTimeMs, this.firstByteMs, this.streams, this.channelIds, this.requestIds, this.others,
    ];
  }
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
      const rows = new LogColumns();
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
        rows.push(entry, taken);
      }
      for (const id of tokenTotals.keys()) {
        if (tokenBalance.get(id)! <= 0) written.drainedTokens.push(id);
      }
      if (rows.size > 0) {
        // One statement for the whole batch: the log rows travel as 17 array parameters (not 17 per
        // row), and the users', keys' and channels' counters change in the same round trip.
        const users = totalsColumns(userTotals);
        const tokens = totalsColumns(tokenTotals);
        const channels = totalsColumns(channelTotals);
        await tx.$executeRawUnsafe(
          `WITH logged AS (
             INSERT INTO logs (user_id, created_at, type, content, username, token_id, token_name, model_name, quota,
               prompt_tokens, completion_tokens, use_time_ms, first_byte_ms, is_stream, channel_id, request_id, other)
             SELECT * FROM unnest($1::int[], $2::timestamp(3)[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[],
               $8::text[], $9::bigint[], $10::int[], $11::int[], $12::int[], $13::int[], $14::boolean[], $15::int[],
               $16::text[], $17::jsonb[])
           ), charged_users AS (
             UPDATE users AS u SET quota = u.quota - v.taken, used_quota = u.used_quota + v.taken,
               request_count = u.request_count + v.requests
             FROM unnest($18::int[], $19::bigint[], $20::bigint[]) AS v(id, taken, requests) WHERE u.id = v.id
           ), charged_tokens AS (
             UPDATE tokens AS t SET remain_quota = t.remain_quota - v.taken, used_quota = t.used_quota + v.used,
               accessed_at = (now() AT TIME ZONE 'UTC')
             FROM unnest($21::int[], $22::bigint[], $23::bigint[]) AS v(id, taken, used) WHERE t.id = v.id
           )
           UPDATE channels AS c SET used_quota = c.used_quota + v.taken
           FROM unnest($24::int[], $25::bigint[]) AS v(id, taken) WHERE c.id = v.id`,
          ...rows.parameters(),
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
