import { chargeConsumeBatch, type ConsumeRow, type PrismaClient } from '@modelgate/db';
import { LOG_TYPE, type PriceUnit } from '@modelgate/schemas';
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

/** When the user's last charge in the batch was settled (crossings are rare: one scan each is fine). */
function lastChargeAt(entries: LedgerEntry[], userId: number): number {
  let last = 0;
  for (const entry of entries) if (entry.userId === userId && entry.createdAt > last) last = entry.createdAt;
  return last;
}

/** How a consume row names a price unit (docs/api.md 2.14). */
const UNIT_NAMES: Readonly<Record<PriceUnit, string>> = { image: 'image', '1k_characters': '1,000 characters', minute: 'minute', request: 'request' };

/** The prices the charge was computed with: units at a unit price, or ratios (the cache ones only when such tokens were charged). */
function ratiosOf(entry: LedgerEntry): string {
  const media = entry.media;
  if (media?.unit !== undefined) return `${media.units} x USD ${media.usd_per_unit} per ${UNIT_NAMES[media.unit]}, group ratio ${entry.groupRatio}`;
  const ratios = [`model ratio ${entry.modelRatio}`, `completion ratio ${entry.completionRatio}`, `group ratio ${entry.groupRatio}`];
  if (entry.cachedTokens > 0) ratios.push(`cache ratio ${entry.cacheRatio}`);
  if (entry.cacheWriteTokens > 0) ratios.push(`cache creation ratio ${entry.cacheCreationRatio}`);
  if (entry.tierAbovePromptTokens !== undefined) ratios.push(`long-context tier above ${entry.tierAbovePromptTokens} prompt tokens`);
  for (const [tool, { count, usdEach, quota }] of Object.entries(entry.serverTools ?? {})) {
    ratios.push(`${tool} ${count} x USD ${usdEach} = ${quota}`);
  }
  return ratios.join(', ');
}

function serverToolsOf(tools: NonNullable<LedgerEntry['serverTools']>): Record<string, { count: number; usd_each: number; quota: number }> {
  return Object.fromEntries(Object.entries(tools).map(([tool, { count, usdEach, quota }]) => [tool, { count, usd_each: usdEach, quota }]));
}

function consumeRowOf(entry: LedgerEntry): ConsumeRow {
  return {
    user_id: entry.userId,
    // timestamp(3) columns hold UTC wall time, as Prisma writes them.
    created_at: new Date(entry.createdAt).toISOString().replace('Z', ''),
    content: ratiosOf(entry),
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
      // docs/api.md 2.11, 2.14: the long-context tier charged, and the server tools' calls and quota.
      ...(entry.tierAbovePromptTokens === undefined ? {} : { tier_above_prompt_tokens: entry.tierAbovePromptTokens }),
      ...(entry.serverTools === undefined ? {} : { server_tools: serverToolsOf(entry.serverTools) }),
      // docs/api.md 2.14: what a media call had (images, characters, seconds, requests) and its units.
      ...entry.media,
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
      written.crossings = crossings.map(({ userId, before, after }) => ({ userId, before, after, crossedAt: lastChargeAt(entries, userId) }));
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
