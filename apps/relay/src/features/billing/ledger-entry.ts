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
  promptTokens: number;
  completionTokens: number;
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
}

/** What a written batch changed, per user and per key, for the Redis mirrors. */
export interface WrittenBatch {
  /** id -> [sum of queued charges, amount actually taken from the balance]. */
  users: Map<number, [number, number]>;
  tokens: Map<number, [number, number]>;
  /** Limited keys whose `remain_quota` the batch took to 0. */
  drainedTokens: number[];
}
