import { AppError } from '@modelgate/errors';
import { describeError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import type { LedgerEntry } from './ledger-entry';
import type { BillingKeys, BillingRedis } from './redis-scripts';
import type { LedgerRepository } from './repository';
import { type Turn, TurnBatch } from './turn-batch';

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

/**
 * How long a settlement or release is remembered as applied (retries must stop well before). Every
 * call leaves one marker key: at 2 000 calls/s about 360 000 keys, some 30 MB of Redis.
 */
const DONE_MARKER_TTL_MS = 3 * 60_000;
/** Failed settlements and releases are retried this long, then logged as lost. */
const RETRY_FOR_MS = 2 * 60_000;
const RETRY_INTERVAL_MS = 1_000;
/** Beyond this many waiting retries (Redis down for long under load) new failures are logged as lost. */
const MAX_PENDING_RETRIES = 10_000;
/** Reservations or settlements per script run: bounds how long one run holds Redis. */
const MAX_BATCH = 100;

interface Reservation {
  account: BillingAccount;
  amount: number;
}

interface Settlement {
  account: BillingAccount;
  reserved: number;
  entry: LedgerEntry;
}

/** A settlement or release that failed (Redis unreachable) and waits for its retry. */
interface PendingOperation {
  describe: Record<string, unknown>;
  run: () => Promise<void>;
  failedAt: number;
}

export interface BalanceMirrorOptions {
  logger: Logger;
  /** A limited key's balance, net of every settled charge, reached 0 (the key cache marks it exhausted). */
  onKeyDrained: (tokenId: number) => void;
  /** The turn the reservations and settlements run at the end of, with the relay's other Redis work. */
  turn?: Turn;
}

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
  private releases = 0;
  private readonly retries: PendingOperation[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private retrying: Promise<void> | undefined;
  /** The reservations of one event-loop turn: one script run. Each result is [code, available]. */
  private readonly reservations: TurnBatch<Reservation, [number, number]>;
  /** The settlements of one event-loop turn: one script run. Each result is the key's balance, or -1. */
  private readonly settlements: TurnBatch<Settlement, number>;

  constructor(
    private readonly redis: BillingRedis,
    private readonly keys: BillingKeys,
    private readonly repository: LedgerRepository,
    readonly instanceId: string,
    private readonly options: BalanceMirrorOptions,
  ) {
    this.holdField = `h:${instanceId}`;
    this.reservations = new TurnBatch((batch) => this.reserveAll(batch), MAX_BATCH, options.turn);
    this.settlements = new TurnBatch((batch) => this.settleAll(batch), MAX_BATCH, options.turn);
  }

  /** Holds `amount` on both balances, or answers 401 (key exhausted) / 403 (balance too low, or a debt). */
  async reserve(account: BillingAccount, amount: number): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      let code: number;
      let available: number;
      try {
        [code, available] = await this.reservations.add({ account, amount });
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
          if (available <= 0) throw new AppError('insufficient_user_quota', `user quota is used up (${available} available): top up to continue`);
          throw new AppError('insufficient_user_quota', `user quota (${available}) is below this request's estimated cost (${amount})`);
        default:
          throw unavailable(new Error(`unexpected reservation result ${code}`));
      }
    }
    throw unavailable(new Error('balance mirror could not be seeded'));
  }

  private async reserveAll(batch: Reservation[]): Promise<[number, number][]> {
    const keys: string[] = [];
    const args: (string | number)[] = [this.holdField];
    for (const { account, amount } of batch) {
      keys.push(this.keys.user(account.userId), this.keys.token(account.tokenId));
      args.push(amount, account.limitedToken ? 1 : 0);
    }
    const flat = await this.redis.mgReserve(keys.length, ...keys, ...args);
    return batch.map((_, index) => [flat[2 * index] ?? -1, flat[2 * index + 1] ?? 0]);
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

  /**
   * Turns the hold into the actual charge, queued for the ledger writer in the same atomic step.
   * Never fails: when Redis cannot be reached the settlement is retried in the background (it is
   * idempotent), so neither the charge nor the hold is lost.
   */
  async settle(account: BillingAccount, reserved: number, entry: LedgerEntry): Promise<void> {
    const settlement: Settlement = { account, reserved, entry };
    try {
      this.afterSettlement(settlement, await this.settlements.add(settlement));
    } catch (err) {
      const describe = {
        operation: 'settle', entry: entry.id, requestId: entry.requestId, userId: account.userId, tokenId: account.tokenId, quota: entry.quota,
      };
      this.retryLater(async () => {
        const [keyBalance] = await this.settleAll([settlement]);
        this.afterSettlement(settlement, keyBalance ?? -1);
      }, describe, err);
    }
  }

  private afterSettlement({ account }: Settlement, keyBalance: number): void {
    if (account.limitedToken && keyBalance !== -1 && keyBalance <= 0) this.options.onKeyDrained(account.tokenId);
  }

  private async settleAll(batch: Settlement[]): Promise<number[]> {
    const keys: string[] = [this.keys.queue];
    const args: (string | number)[] = [this.holdField, DONE_MARKER_TTL_MS];
    for (const { account, reserved, entry } of batch) {
      keys.push(this.keys.user(account.userId), this.keys.token(account.tokenId), this.keys.done(entry.id));
      args.push(-reserved, account.limitedToken ? 1 : 0, entry.quota, JSON.stringify(entry));
    }
    const flat = await this.redis.mgSettle(keys.length, ...keys, ...args);
    return batch.map((_, index) => flat[2 * index + 1] ?? -1);
  }

  /** Gives the whole hold back (the call failed, nothing is charged). Never fails, like settle. */
  async release(account: BillingAccount, reserved: number): Promise<void> {
    this.releases += 1;
    const done = this.keys.done(`${this.instanceId}:release:${this.releases}`);
    const run = async () => {
      await this.redis.mgRelease(
        this.keys.user(account.userId),
        this.keys.token(account.tokenId),
        done,
        -reserved,
        this.holdField,
        account.limitedToken ? 1 : 0,
        DONE_MARKER_TTL_MS,
      );
    };
    await this.runOrRetry(run, { operation: 'release', userId: account.userId, tokenId: account.tokenId, reserved });
  }

  private async runOrRetry(run: () => Promise<void>, describe: Record<string, unknown>): Promise<void> {
    try {
      await run();
    } catch (err) {
      this.retryLater(run, describe, err);
    }
  }

  private retryLater(run: () => Promise<void>, describe: Record<string, unknown>, err: unknown): void {
    if (this.retries.length >= MAX_PENDING_RETRIES) {
      this.options.logger.error({ ...describe, err: describeError(err) }, 'balance update lost: too many retries waiting');
      return;
    }
    this.options.logger.warn({ ...describe, err: describeError(err) }, 'balance update failed; retrying in the background');
    this.retries.push({ describe, run, failedAt: Date.now() });
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.retrying) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.retrying = this.retryPending(false).finally(() => {
        this.retrying = undefined;
        if (this.retries.length > 0) this.scheduleRetry();
      });
    }, RETRY_INTERVAL_MS);
    this.retryTimer.unref();
  }

  /** Retries in failure order; stops at the first that fails again (Redis still away), unless `last`. */
  private async retryPending(last: boolean): Promise<void> {
    for (let pending = this.retries[0]; pending; pending = this.retries[0]) {
      try {
        await pending.run();
      } catch (err) {
        if (!last && Date.now() - pending.failedAt < RETRY_FOR_MS) return;
        this.options.logger.error({ ...pending.describe, err: describeError(err) }, 'balance update lost after retrying');
      }
      this.retries.shift();
    }
  }

  /** Balance updates waiting for a retry. */
  get pendingRetries(): number {
    return this.retries.length;
  }

  /** Shutdown: one last try for every waiting update (before the ledger's last flush); failures are logged as lost. */
  async stop(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.retrying;
    await this.retryPending(true);
  }
}
