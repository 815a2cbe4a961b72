import { chargeConsumeBatch, type ConsumeRow, type PrismaClient } from '@modelgate/db';
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

function unique(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/** The ratios the charge was computed with; the cache ones only when such tokens were charged. */
function ratiosOf(entry: LedgerEntry): string {
  const ratios = [`model ratio ${entry.modelRatio}`, `completion ratio ${entry.completionRatio}`, `group ratio ${entry.groupRatio}`];
  if (entry.cachedTokens > 0) ratios.push(`cache ratio ${entry.cacheRatio}`);
  if (entry.cacheWriteTokens > 0) ratios.push(`cache creation ratio ${entry.cacheCreationRatio}`);
  return ratios.join(', ');
}

function contentOf(entry: LedgerEntry, taken: number): string {
  const ratios = ratiosOf(entry);
  return taken === entry.quota ? ratios : `${ratios}; balance ran out: charged ${taken} of ${entry.quota}`;
}

function consumeRowOf(entry: LedgerEntry, taken: number): ConsumeRow {
  return {
    user_id: entry.userId,
    // timestamp(3) columns hold UTC wall time, as Prisma writes them.
    created_at: new Date(entry.createdAt).toISOString().replace('Z', ''),
    content: contentOf(entry, taken),
    username: entry.username,
    token_id: entry.tokenId,
    token_name: entry.tokenName,
    model_name: entry.model,
    charged: taken,
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
      // docs/api.md 2.11: every token count the charge was computed from (new-api's keys).
      cache_tokens: entry.cachedTokens,
      cache_creation_tokens: entry.cacheWriteTokens,
      reasoning_tokens: entry.reasoningTokens,
      cache_ratio: entry.cacheRatio,
      cache_creation_ratio: entry.cacheCreationRatio,
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
      const rows: ConsumeRow[] = [];
      const takenFromKeys = new Map<number, number>();
      for (const entry of entries) {
        // Users are only soft-deleted, so the row is there (their charges are written like any
        // other); were it gone, the log row's foreign key would refuse the entry (dead letter).
        const balance = userBalance.get(entry.userId) ?? 0;
        const queuedOnToken = entry.limitedToken ? entry.quota : 0;
        const taken = Math.min(entry.quota, balance);
        userBalance.set(entry.userId, balance - taken);
        add(written.users, entry.userId, entry.quota, taken);

        const remain = tokenBalance.get(entry.tokenId);
        const takenFromToken = remain === undefined ? 0 : Math.min(taken, remain);
        if (remain !== undefined) {
          tokenBalance.set(entry.tokenId, remain - takenFromToken);
          if (Number.isFinite(remain)) takenFromKeys.set(entry.tokenId, (takenFromKeys.get(entry.tokenId) ?? 0) + takenFromToken);
        }
        add(written.tokens, entry.tokenId, queuedOnToken, Number.isFinite(remain ?? 0) ? takenFromToken : 0);
        rows.push(consumeRowOf(entry, taken));
      }
      for (const id of takenFromKeys.keys()) {
        if (tokenBalance.get(id)! <= 0) written.drainedTokens.push(id);
      }
      // One statement for the whole batch: the rows, and the users', keys' and channels' counters.
      await chargeConsumeBatch(tx, rows, takenFromKeys);
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
