import type { MediaBilled } from '@modelgate/schemas';
import type { TraceHeaders } from '@modelgate/telemetry';
import type { ToolCharge } from './pricing';

/** One settled request, as queued in Redis and written as one consume row of the `logs` ledger. */
export interface LedgerEntry {
  /** Unique per settlement: makes a batch's commit recognisable after a crash. */
  id: string;
  userId: number;
  username: string;
  tokenId: number;
  tokenName: string;
  /** Whether the key's own balance was reserved and charged (not `unlimited_quota`). */
  limitedToken: boolean;
  model: string;
  channelId: number;
  /** Charge in quota units (>= 0). */
  quota: number;
  /** Includes the cached and cache-write tokens (docs/api.md 2.6). */
  promptTokens: number;
  /** Includes the reasoning tokens. */
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  useTimeMs: number;
  firstByteMs: number | null;
  isStream: boolean;
  requestId: string;
  /** Epoch ms of settlement. */
  createdAt: number;
  group: string;
  modelRatio: number;
  completionRatio: number;
  groupRatio: number;
  cacheRatio: number;
  cacheCreationRatio: number;
  /** The long-context tier charged (its threshold), when the prompt reached one (docs/api.md 2.11). */
  tierAbovePromptTokens?: number;
  /** Server tool -> its calls, USD each and quota, included in `quota` (docs/api.md 2.14). */
  serverTools?: Record<string, ToolCharge>;
  /** A media call: what it had and, priced per unit, the units charged (docs/api.md 2.14). */
  media?: MediaBilled;
  /** The request's trace context, only when it was traced: a balance warning the charge sets off continues it. */
  trace?: TraceHeaders;
}

/** The fields entries queued by relays older than docs/api.md 2.11 do not have. */
type CacheFields = 'cachedTokens' | 'cacheWriteTokens' | 'reasoningTokens' | 'cacheRatio' | 'cacheCreationRatio';

/**
 * An entry as read back from the Redis queue. One queued before an upgrade lacks the cache fields:
 * its charge counted no cached, cache-write or reasoning tokens apart, i.e. 0 of each at ratio 1.
 */
export function ledgerEntryOf(text: string): LedgerEntry {
  const entry = JSON.parse(text) as Omit<LedgerEntry, CacheFields> & Partial<Pick<LedgerEntry, CacheFields>>;
  return {
    ...entry,
    cachedTokens: entry.cachedTokens ?? 0,
    cacheWriteTokens: entry.cacheWriteTokens ?? 0,
    reasoningTokens: entry.reasoningTokens ?? 0,
    cacheRatio: entry.cacheRatio ?? 1,
    cacheCreationRatio: entry.cacheCreationRatio ?? 1,
  };
}

/** What a written batch changed, per user and per key, for the Redis mirrors. */
export interface WrittenBatch {
  /** id -> [sum of queued charges, amount actually taken from the balance]. */
  users: Map<number, [number, number]>;
  tokens: Map<number, [number, number]>;
  /** Limited keys whose `remain_quota` the batch took to 0 or below. */
  drainedTokens: number[];
  /** Users whose balance the batch took below their warning threshold (docs/api.md 3.9.6). */
  crossings: BalanceWarning[];
}

/** One crossing of a user's warning threshold, as the balance-warning queue takes it. */
export interface BalanceWarning {
  userId: number;
  before: bigint;
  after: bigint;
  /** Epoch ms of the user's last charge in the batch: the same however often the batch is looked at. */
  crossedAt: number;
  /** That charge's trace context, when its request was traced. */
  trace?: TraceHeaders;
}
