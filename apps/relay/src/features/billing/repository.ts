import { chargeConsumeBatch, type ConsumeRow, type PrismaClient } from '@modelgate/db';
import { LOG_TYPE, type StoredConsumeOther } from '@modelgate/schemas';
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

function unique(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/** The user's last charge in the batch, whose crossing it reports (crossings are rare: one scan each is fine). */
function lastChargeOf(entries: LedgerEntry[], userId: number): LedgerEntry | undefined {
  let last: LedgerEntry | undefined;
  for (const entry of entries) if (entry.userId === userId && (!last || entry.createdAt > last.createdAt)) last = entry;
  return last;
}

/** timestamp(3) columns hold UTC wall time, as Prisma writes them. */
function wallTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace('Z', '');
}

function serverToolsOf(tools: NonNullable<LedgerEntry['serverTools']>): Record<string, { count: number; usd_each: number; quota: number }> {
  return Object.fromEntries(Object.entries(tools).map(([tool, { count, usdEach, quota }]) => [tool, { count, usd_each: usdEach, quota }]));
}

/**
 * The row's `other`, lean (docs/api.md 2.11, 2.14): token counts of 0 and the cache ratios of
 * tokens the call did not have are left out (the account shows them as 0 and 1), and `content` is
 * written from it when read: a log row is the ledger's one write per call, every byte of it in the WAL.
 */
function otherOf(entry: LedgerEntry): StoredConsumeOther {
  const other: StoredConsumeOther = {
    entry: entry.id,
    group: entry.group,
    model_ratio: entry.modelRatio,
    completion_ratio: entry.completionRatio,
    group_ratio: entry.groupRatio,
  };
  if (entry.cachedTokens > 0) {
    other.cache_tokens = entry.cachedTokens;
    other.cache_ratio = entry.cacheRatio;
  }
  if (entry.cacheWriteTokens > 0) {
    other.cache_creation_tokens = entry.cacheWriteTokens;
    other.cache_creation_ratio = entry.cacheCreationRatio;
  }
  if (entry.reasoningTokens > 0) other.reasoning_tokens = entry.reasoningTokens;
  if (entry.tierAbovePromptTokens !== undefined) other.tier_above_prompt_tokens = entry.tierAbovePromptTokens;
  if (entry.serverTools !== undefined) other.server_tools = serverToolsOf(entry.serverTools);
  return { ...other, ...entry.media };
}

function consumeRowOf(entry: LedgerEntry): ConsumeRow {
  return {
    user_id: entry.userId,
    created_at: wallTime(entry.createdAt),
    username: entry.username,
    token_id: entry.tokenId,
    token_name: entry.tokenName,
    model_name: entry.model,
    charged: entry.quota,
    prompt_tokens: entry.promptTokens,
    completion_tokens: entry.completionTokens,
    use_time_ms: entry.useTimeMs,
    first_byte_ms: entry.firstByteMs,
    is_stream: entry.isStream,
    channel_id: entry.channelId,
    request_id: entry.requestId,
    other: otherOf(entry),
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
   * transaction. Every charge is booked in full (docs/api.md 2.5): one beyond the balance (usage
   * past the reservation, or a balance an admin lowered meanwhile) takes it below 0, a debt, and
   * the row records the whole charge, so quota = sum of log deltas holds.
   */
  async writeBatch(entries: LedgerEntry[]): Promise<WrittenBatch> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRawUnsafe('SELECT pg_advisory_xact_lock(hashtext($1))::text', this.advisoryLockName);
      // Users, then keys, each in id order: one round trip for both sets of row locks.
      const locked = await tx.$queryRawUnsafe<{ kind: 'user' | 'token'; id: number; balance: bigint | null; unlimited: boolean }[]>(
        `SELECT 'user' AS kind, id, NULL::bigint AS balance, false AS unlimited
           FROM (SELECT id FROM users WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE) AS u
         UNION ALL
         SELECT 'token', id, remain_quota, unlimited_quota
           FROM (SELECT id, remain_quota, unlimited_quota FROM tokens WHERE id = ANY($2::int[]) ORDER BY id FOR UPDATE) AS t`,
        unique(entries.map((e) => e.userId)),
        unique(entries.map((e) => e.tokenId)),
      );
      // Limited keys' balances (an unlimited key's remain_quota is not charged).
      const tokenBalance = new Map<number, number>();
      for (const row of locked) {
        if (row.kind === 'token' && !row.unlimited) tokenBalance.set(row.id, Number(row.balance));
      }

      const written: WrittenBatch = { users: new Map(), tokens: new Map(), drainedTokens: [], crossings: [] };
      const rows: ConsumeRow[] = [];
      const takenFromKeys = new Map<number, number>();
      for (const entry of entries) {
        // Users are only soft-deleted, so the row is there (their charges are written like any
        // other); were it gone, the log row's foreign key would refuse the entry (dead letter).
        add(written.users, entry.userId, entry.quota, entry.quota);

        // The key as it is now: limited when queued but made unlimited since (or the reverse) is
        // charged as it is now; its mirror's queued charge leaves either way.
        const remain = tokenBalance.get(entry.tokenId);
        if (remain !== undefined) {
          tokenBalance.set(entry.tokenId, remain - entry.quota);
          takenFromKeys.set(entry.tokenId, (takenFromKeys.get(entry.tokenId) ?? 0) + entry.quota);
        }
        add(written.tokens, entry.tokenId, entry.limitedToken ? entry.quota : 0, remain === undefined ? 0 : entry.quota);
        rows.push(consumeRowOf(entry));
      }
      for (const id of takenFromKeys.keys()) {
        if (tokenBalance.get(id)! <= 0) written.drainedTokens.push(id);
      }
      // One statement for the whole batch: the rows, and the users', keys' and channels' counters.
      const crossings = await chargeConsumeBatch(tx, rows, takenFromKeys);
      written.crossings = crossings.map(({ userId, before, after }) => {
        const last = lastChargeOf(entries, userId);
        return { userId, before, after, crossedAt: last?.createdAt ?? 0, ...(last?.trace && { trace: last.trace }) };
      });
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
      // The rows are dated at their settlement: the range keeps the search to their months' partitions.
      const times = entries.map((e) => e.createdAt);
      const found = await tx.$queryRawUnsafe<{ found: boolean }[]>(
        `SELECT EXISTS (SELECT 1 FROM logs WHERE request_id = ANY($1::text[]) AND type = ${LOG_TYPE.consume}
           AND other->>'entry' = ANY($2::text[]) AND created_at BETWEEN $3::timestamp(3) AND $4::timestamp(3)) AS found`,
        entries.map((e) => e.requestId),
        entries.map((e) => e.id),
        wallTime(Math.min(...times)),
        wallTime(Math.max(...times)),
      );
      return found[0]?.found === true;
    }, { timeout: BATCH_TRANSACTION_TIMEOUT_MS, maxWait: BATCH_TRANSACTION_TIMEOUT_MS });
  }
}
