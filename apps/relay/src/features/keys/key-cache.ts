import { type BudgetPeriod, budgetPeriodOf, type IpAllowList, parseIpAllowList } from '@modelgate/schemas';
import type { KeyRepository, TokenRow, UserRow } from './repository';

/**
 * The account service validates `allow_ips` on write; an entry it would refuse (a row written
 * before, or by hand) is skipped, so a typo narrows access instead of opening it. A list of
 * nothing but such entries allows only the unspecified address, which no client has.
 */
function allowListOf(text: string): IpAllowList | null {
  const entries = text.split(/[\n,]/).map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 0) return null;
  const valid = entries.filter((entry) => {
    try {
      parseIpAllowList(entry);
      return true;
    } catch {
      return false;
    }
  });
  return parseIpAllowList(valid.length > 0 ? valid.join('\n') : '0.0.0.0/32');
}

/** An API key as the hot path needs it, parsed once when loaded. */
export interface KeyRecord {
  id: number;
  userId: number;
  name: string;
  keyHash: string;
  status: number;
  /** Epoch ms, or null for never. */
  expiresAt: number | null;
  /** remain_quota when loaded; the live balance is the Redis mirror (billing). */
  remainQuota: number;
  unlimitedQuota: boolean;
  /** null = every model allowed. */
  modelLimits: Set<string> | null;
  /** null = every address allowed. */
  allowIps: IpAllowList | null;
  /** Empty = the owner's group. */
  group: string;
  /** Requests per minute; 0 = RELAY_KEY_RATE_LIMIT_PER_MINUTE (docs/api.md 3.9.3). */
  rpmLimit: number;
  /** Tokens per minute; 0 = none. */
  tpmLimit: number;
  /** Requests in flight; 0 = none. */
  maxConcurrency: number;
  /** USD per budget period, or null for no budget (docs/api.md 3.9.4). */
  budgetUsd: number | null;
  budgetPeriod: BudgetPeriod;
}

export interface UserRecord {
  id: number;
  username: string;
  status: number;
  /** Whether a key may name a group other than the owner's (admins only, docs/api.md 3.2). */
  role: number;
  group: string;
}

/** How long "no such key" is remembered, so a flood of bad keys does not become a flood of queries. */
const UNKNOWN_KEY_TTL_MS = 5_000;

function toKeyRecord(row: TokenRow): KeyRecord {
  const limits = row.modelLimits.split(',').map((m) => m.trim()).filter(Boolean);
  return {
    id: row.id,
    userId: row.userId,
    name: row.name,
    keyHash: row.keyHash,
    status: row.status,
    expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    remainQuota: Number(row.remainQuota),
    unlimitedQuota: row.unlimitedQuota,
    modelLimits: row.modelLimitsEnabled ? new Set(limits) : null,
    allowIps: allowListOf(row.allowIps),
    group: row.group,
    rpmLimit: row.rpmLimit,
    tpmLimit: row.tpmLimit,
    maxConcurrency: row.maxConcurrency,
    budgetUsd: row.budgetUsd === null ? null : row.budgetUsd.toNumber(),
    budgetPeriod: budgetPeriodOf(row.budgetPeriod),
  };
}

/** Deleted users are treated as absent: their keys stop working at once. */
function toUserRecord(row: UserRow): UserRecord | null {
  if (row.deletedAt) return null;
  return { id: row.id, username: row.username, status: row.status, role: row.role, group: row.group };
}

export interface ResolvedKey {
  key: KeyRecord;
  user: UserRecord;
}

/**
 * Keys by hash and their owners, in memory. A key is read from the database the first time it is
 * seen; afterwards only invalidation messages and the periodic refresh touch the database.
 */
export class KeyCache {
  private readonly keys = new Map<string, KeyRecord>();
  private readonly unknownUntil = new Map<string, number>();
  private readonly users = new Map<number, UserRecord | null>();
  private readonly loading = new Map<string, Promise<ResolvedKey | null>>();
  /** Bumped by every invalidation, so a load that raced one is not cached. */
  private generation = 0;

  constructor(private readonly repository: KeyRepository) {}

  /**
   * What memory says of the key with this hash: it and its owner, null when either does not exist,
   * or undefined when only the database can tell (then `load` it).
   */
  cached(keyHash: string): ResolvedKey | null | undefined {
    const key = this.keys.get(keyHash);
    if (key) {
      const user = this.users.get(key.userId);
      return user === undefined ? undefined : user ? { key, user } : null;
    }
    const until = this.unknownUntil.get(keyHash);
    if (until !== undefined) {
      if (until > Date.now()) return null;
      this.unknownUntil.delete(keyHash);
    }
    return undefined;
  }

  /**
   * Reads the key and its owner from the database: one query for any number of concurrent callers,
   * preceded by the first caller's `beforeRead` (the others share its outcome, a refusal included).
   */
  load(keyHash: string, beforeRead: () => Promise<void>): Promise<ResolvedKey | null> {
    let pending = this.loading.get(keyHash);
    if (!pending) {
      pending = beforeRead()
        .then(() => this.read(keyHash))
        .finally(() => this.loading.delete(keyHash));
      this.loading.set(keyHash, pending);
    }
    return pending;
  }

  private async read(keyHash: string): Promise<ResolvedKey | null> {
    const generation = this.generation;
    const row = await this.repository.findTokenByHash(keyHash);
    const current = generation === this.generation;
    if (!row) {
      if (current) this.unknownUntil.set(keyHash, Date.now() + UNKNOWN_KEY_TTL_MS);
      return null;
    }
    const key = toKeyRecord(row);
    const user = toUserRecord(row.user);
    if (current) {
      this.keys.set(keyHash, key);
      this.users.set(user?.id ?? row.userId, user);
    }
    return user ? { key, user } : null;
  }

  /** A key changed (edited, disabled, deleted, created): forget it; the next request re-reads it. */
  invalidateToken(tokenId: number, keyHash?: string): void {
    this.generation++;
    if (keyHash) {
      this.keys.delete(keyHash);
      this.unknownUntil.delete(keyHash);
    }
    for (const [hash, key] of this.keys) {
      if (key.id === tokenId) this.keys.delete(hash);
    }
  }

  /**
   * Settlement took a limited key's balance to 0: its next request must get 401 before any other
   * check (docs/api.md 1.3), not wait for the periodic re-read of `remain_quota`. A top-up or edit of
   * the key arrives as an invalidation and re-reads it.
   */
  markExhausted(tokenId: number): void {
    for (const [hash, key] of this.keys) {
      if (key.id === tokenId && key.remainQuota > 0) this.keys.set(hash, { ...key, remainQuota: 0 });
    }
  }

  /** A user changed (status, role, group, deletion): re-read it if cached. */
  async invalidateUser(userId: number): Promise<void> {
    this.generation++;
    if (!this.users.has(userId)) return;
    const [row] = await this.repository.findUsers([userId]);
    this.users.set(userId, row ? toUserRecord(row) : null);
  }

  cachedTokenIds(): number[] {
    return [...this.keys.values()].map((key) => key.id);
  }

  cachedUserIds(): number[] {
    return [...this.users.keys()];
  }

  /** Limited keys in the cache (their balances are mirrored in Redis). */
  limitedTokenIds(): number[] {
    return [...this.keys.values()].filter((key) => !key.unlimitedQuota).map((key) => key.id);
  }

  /** Safety net behind the invalidation messages: re-reads every cached key and user. */
  async refreshAll(): Promise<void> {
    this.generation++;
    const tokenIds = this.cachedTokenIds();
    const userIds = this.cachedUserIds();
    const [tokens, users] = await Promise.all([
      tokenIds.length ? this.repository.findTokens(tokenIds) : Promise.resolve([]),
      userIds.length ? this.repository.findUsers(userIds) : Promise.resolve([]),
    ]);
    const freshTokens = new Map(tokens.map((row) => [row.keyHash, toKeyRecord(row)]));
    for (const hash of [...this.keys.keys()]) {
      const fresh = freshTokens.get(hash);
      if (fresh) this.keys.set(hash, fresh);
      else this.keys.delete(hash);
    }
    const freshUsers = new Map(users.map((row) => [row.id, toUserRecord(row)]));
    for (const id of userIds) this.users.set(id, freshUsers.get(id) ?? null);
    this.unknownUntil.clear();
  }
}
