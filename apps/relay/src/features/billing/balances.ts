import { AppError } from '@modelgate/errors';
import type { LedgerEntry } from './ledger-entry';
import type { BillingKeys, BillingRedis } from './redis-scripts';
import type { LedgerRepository } from './repository';

/** Whose balances a call draws on. */
export interface BillingAccount {
  userId: number;
  tokenId: number;
  /** false for `unlimited_quota` keys: only the user's balance is reserved. */
  limitedToken: boolean;
}

const RESERVE_OK = 0;
const USER_MIRROR_MISSING = 1;
const TOKEN_MIRROR_MISSING = 2;
const USER_SHORT = 3;
const TOKEN_SHORT = 4;

function unavailable(err: unknown): AppError {
  return new AppError('service_unavailable', 'billing is temporarily unavailable', { cause: err });
}

/**
 * The hot path of billing: atomic reservations against the Redis balance mirrors of the user and
 * the key, then settlement (the hold becomes a queued ledger entry) or release. No database round
 * trip, except the first time a balance is seen.
 */
export class BalanceMirror {
  private readonly holdField: string;

  constructor(
    private readonly redis: BillingRedis,
    private readonly keys: BillingKeys,
    private readonly repository: LedgerRepository,
    readonly instanceId: string,
  ) {
    this.holdField = `h:${instanceId}`;
  }

  /** Holds `amount` on both balances, or answers 401 (key exhausted) / 403 (balance too low). */
  async reserve(account: BillingAccount, amount: number): Promise<void> {
    const userKey = this.keys.user(account.userId);
    const tokenKey = this.keys.token(account.tokenId);
    for (let attempt = 0; attempt < 3; attempt++) {
      let code: number;
      let available: number;
      try {
        [code, available] = await this.redis.mgReserve(userKey, tokenKey, amount, this.holdField, account.limitedToken ? 1 : 0);
      } catch (err) {
        throw unavailable(err);
      }
      switch (code) {
        case RESERVE_OK:
          return;
        case USER_MIRROR_MISSING:
        case TOKEN_MIRROR_MISSING:
          await this.seed(account);
          continue;
        case TOKEN_SHORT:
          if (available <= 0) throw new AppError('invalid_api_key', 'API key quota is exhausted');
          throw new AppError('insufficient_user_quota', `API key quota (${available}) is below this request's estimated cost (${amount})`);
        case USER_SHORT:
          throw new AppError('insufficient_user_quota', `user quota (${Math.max(0, available)}) is below this request's estimated cost (${amount})`);
        default:
          throw unavailable(new Error(`unexpected reservation result ${code}`));
      }
    }
    throw unavailable(new Error('balance mirror could not be seeded'));
  }

  /** Creates missing mirrors from the database (first use of a balance since Redis was empty). */
  private async seed(account: BillingAccount): Promise<void> {
    let balances;
    try {
      balances = await this.repository.readBalances([account.userId], account.limitedToken ? [account.tokenId] : []);
    } catch (err) {
      throw unavailable(err);
    }
    const userQuota = balances.users.get(account.userId);
    if (userQuota === undefined) throw new AppError('invalid_api_key', 'invalid API key');
    try {
      await this.redis.mgSeed(this.keys.user(account.userId), userQuota.toString());
      if (account.limitedToken) {
        const remain = balances.tokens.get(account.tokenId);
        if (remain === undefined) throw new AppError('invalid_api_key', 'invalid API key');
        await this.redis.mgSeed(this.keys.token(account.tokenId), remain.toString());
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw unavailable(err);
    }
  }

  /** Turns the hold into the actual charge, queued for the ledger writer in the same atomic step. */
  async settle(account: BillingAccount, reserved: number, entry: LedgerEntry): Promise<void> {
    await this.redis.mgSettle(
      this.keys.user(account.userId),
      this.keys.token(account.tokenId),
      this.keys.queue,
      -reserved,
      this.holdField,
      account.limitedToken ? 1 : 0,
      entry.quota,
      JSON.stringify(entry),
    );
  }

  /** Gives the whole hold back (the call failed, nothing is charged). */
  async release(account: BillingAccount, reserved: number): Promise<void> {
    await this.redis.mgRelease(
      this.keys.user(account.userId),
      this.keys.token(account.tokenId),
      -reserved,
      this.holdField,
      account.limitedToken ? 1 : 0,
    );
  }
}
