import { randomBytes } from 'node:crypto';
import { sqlStateOf } from '@modelgate/errors';
import { describeError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import { type BalanceWarning, type LedgerEntry, ledgerEntryOf, type WrittenBatch } from './ledger-entry';
import type { BillingKeys, BillingRedis } from './redis-scripts';
import type { LedgerRepository } from './repository';

const LOCK_TTL_MS = 30_000;
const LOCK_WAIT_MS = 10_000;
const LOCK_RETRY_MS = 5;
/** Batches written per lock hold, so reloads waiting for the lock are not starved. */
const BATCHES_PER_TURN = 20;
const INSTANCE_TTL_MS = 30_000;
const HEARTBEAT_MS = 10_000;

export interface LedgerWriterOptions {
  flushIntervalMs: number;
  batchSize: number;
  /**
   * Written charges took these limited keys to 0: every relay instance must re-read them, so their
   * next request gets 401 before any other check (docs/api.md 1.3).
   */
  onKeysDrained: (tokenIds: number[]) => Promise<unknown>;
  /**
   * A committed batch took these users below their warning threshold. Called once per batch, not
   * awaited: queueing the warnings must never hold up or fail the ledger.
   */
  onBalanceCrossings: (crossings: BalanceWarning[]) => void;
}

/** The ledger's state in Redis, for the metrics. */
export interface LedgerCounts {
  /** Settled charges not yet written: queued, or in a batch being written. */
  backlog: number;
  /** Entries PostgreSQL refused for their data, set aside uncharged. */
  deadLetters: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether PostgreSQL refused the data itself (SQLSTATE class 22 data exception, 23 integrity
 * violation): retrying the same rows can never succeed, unlike a lost connection or a timeout.
 */
export function isDataError(err: unknown): boolean {
  const state = sqlStateOf(err);
  return state !== undefined && (state.startsWith('22') || state.startsWith('23'));
}

/**
 * Moves settled charges from the Redis queue to PostgreSQL in batches, one transaction each, and
 * keeps the balance mirrors equal to "database balance - unwritten charges - holds".
 *
 * Every step that reads or changes a mirror's `db` field (writing a batch, reloading balances after
 * an account-service change) runs under one Redis lock, so a reload never sees a batch that is in
 * PostgreSQL but not yet in the mirror. A writer that dies mid-batch leaves the batch in
 * `processing`; the next lock holder asks PostgreSQL whether it was committed (after waiting for
 * the advisory lock any still-running transaction holds) and finishes or requeues it.
 */
export class LedgerWriter {
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastErrorLog = 0;
  /** Entries still to write one per transaction, after PostgreSQL refused a batch for its data. */
  private isolating = 0;
  /**
   * Our locks whose release failed (Redis unreachable, or its master failed over while we held one):
   * released before the next attempt, so the ledger resumes then instead of after LOCK_TTL_MS.
   */
  private readonly unreleased = new Set<string>();

  constructor(
    private readonly redis: BillingRedis,
    private readonly keys: BillingKeys,
    private readonly repository: LedgerRepository,
    private readonly instanceId: string,
    private readonly options: LedgerWriterOptions,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat().catch(() => undefined), HEARTBEAT_MS);
    this.heartbeat.unref();
    this.timer = setInterval(() => void this.tick(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Holds of a live instance survive reloads; its key expiring marks its holds as abandoned. */
  private async beat(): Promise<void> {
    await this.redis.set(this.keys.instancePrefix + this.instanceId, '1', 'PX', INSTANCE_TTL_MS);
  }

  /** Stops the timers and writes everything queued (graceful shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    this.timer = undefined;
    try {
      await this.flush();
    } finally {
      await this.redis.del(this.keys.instancePrefix + this.instanceId).catch(() => undefined);
    }
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.flushTurn(false)
      .then(() => undefined)
      .catch((err) => this.logFailure(err))
      .finally(() => {
        this.running = undefined;
      });
  }

  private logFailure(err: unknown): void {
    const now = Date.now();
    if (now - this.lastErrorLog < 5_000) return;
    this.lastErrorLog = now;
    this.logger.error({ err: describeError(err) }, 'ledger flush failed; charges stay queued in Redis');
  }

  /** Three list lengths, sent back to back (answered in one round trip). */
  async counts(): Promise<LedgerCounts> {
    const [queued, processing, deadLetters] = await Promise.all([
      this.redis.llen(this.keys.queue),
      this.redis.llen(this.keys.processing),
      this.redis.llen(this.keys.deadLetters),
    ]);
    return { backlog: queued + processing, deadLetters };
  }

  /** Writes every charge queued so far (by any instance); resolves when the queue is empty. */
  async flush(): Promise<void> {
    const deadline = Date.now() + LOCK_WAIT_MS * 3;
    for (;;) {
      await this.running;
      const [queued, processing] = await Promise.all([
        this.redis.llen(this.keys.queue),
        this.redis.exists(this.keys.processing),
      ]);
      if (queued === 0 && processing === 0) return;
      if (Date.now() > deadline) throw new Error('ledger flush did not finish in time');
      const flushed = this.flushTurn(true);
      this.running = flushed.then(() => undefined, () => undefined);
      await flushed;
      this.running = undefined;
    }
  }

  /** One lock hold: finishes an abandoned batch, then writes up to BATCHES_PER_TURN batches. */
  private async flushTurn(waitForLock: boolean): Promise<boolean> {
    const lock = await this.lock(waitForLock);
    if (!lock) return false;
    try {
      await this.recover();
      for (let i = 0; i < BATCHES_PER_TURN || this.isolating > 0; i++) {
        const batchId = randomBytes(8).toString('hex');
        const raw = await this.redis.mgTakeBatch(
          this.keys.queue, this.keys.processing, this.keys.batch, this.keys.lock,
          lock, this.isolating > 0 ? 1 : Math.min(this.options.batchSize, 5_000), batchId,
        );
        if (!raw || raw.length === 0) {
          this.isolating = 0;
          break;
        }
        await this.write(batchId, raw.map(ledgerEntryOf));
      }
      return true;
    } finally {
      await this.unlock(lock);
    }
  }

  private async write(batchId: string, entries: LedgerEntry[]): Promise<void> {
    let written: WrittenBatch;
    try {
      written = await this.repository.writeBatch(entries);
    } catch (err) {
      // Anything but refused data (database down, timeout): the batch stays in processing and
      // the next turn's recover() requeues it.
      if (!isDataError(err)) throw err;
      await this.refused(batchId, entries, err);
      return;
    }
    await this.finish(batchId, written);
    if (written.crossings.length > 0) this.options.onBalanceCrossings(written.crossings);
    if (this.isolating > 0) this.isolating -= 1;
    if (written.drainedTokens.length > 0) {
      await this.options.onKeysDrained(written.drainedTokens).catch((err: unknown) => this.logFailure(err));
    }
  }

  /**
   * PostgreSQL refused a batch for its data: it goes back to the queue to be written one entry per
   * transaction, and an entry refused on its own is set aside in the dead-letter list, uncharged
   * (no log row, no balance change: the ledger invariant holds), so one bad entry never blocks
   * every later charge.
   */
  private async refused(batchId: string, entries: LedgerEntry[], err: unknown): Promise<void> {
    const [entry, ...others] = entries;
    if (entry === undefined) return;
    if (others.length > 0) {
      await this.redis.mgRequeueBatch(this.keys.queue, this.keys.processing, this.keys.batch, batchId);
      this.isolating = entries.length;
      this.logger.warn({ entries: entries.length, err: describeError(err) }, 'ledger batch refused; writing its entries one by one');
      return;
    }
    const pending: (string | number)[] = [this.keys.user(entry.userId), -entry.quota];
    if (entry.limitedToken) pending.push(this.keys.token(entry.tokenId), -entry.quota);
    await this.redis.mgDeadLetterBatch(this.keys.processing, this.keys.batch, this.keys.deadLetters, batchId, ...pending);
    if (this.isolating > 0) this.isolating -= 1;
    this.logger.error(
      {
        entry: entry.id,
        requestId: entry.requestId,
        userId: entry.userId,
        tokenId: entry.tokenId,
        quota: entry.quota,
        deadLetters: this.keys.deadLetters,
        err: describeError(err),
      },
      'ledger entry refused by the database; set aside uncharged in the dead-letter list',
    );
  }

  private async finish(batchId: string, written: WrittenBatch): Promise<void> {
    const triples: (string | number)[] = [];
    for (const [id, [queued, taken]] of written.users) triples.push(this.keys.user(id), -queued, -taken);
    for (const [id, [queued, taken]] of written.tokens) triples.push(this.keys.token(id), -queued, -taken);
    await this.redis.mgFinishBatch(this.keys.processing, this.keys.batch, batchId, ...triples);
  }

  /** A batch left in `processing` by a writer that died or lost the lock. */
  private async recover(): Promise<void> {
    const [batchId, raw] = await Promise.all([
      this.redis.get(this.keys.batch),
      this.redis.lrange(this.keys.processing, 0, -1),
    ]);
    if (!batchId) return;
    const entries = raw.map(ledgerEntryOf);
    if (entries.length > 0 && (await this.repository.wasWritten(entries))) {
      // Committed: only the queued charges leave the mirrors here; the db balances are re-read.
      const written: WrittenBatch = { users: new Map(), tokens: new Map(), drainedTokens: [], crossings: [] };
      for (const entry of entries) {
        const user = written.users.get(entry.userId) ?? [0, 0];
        user[0] += entry.quota;
        written.users.set(entry.userId, user);
        if (entry.limitedToken) {
          const token = written.tokens.get(entry.tokenId) ?? [0, 0];
          token[0] += entry.quota;
          written.tokens.set(entry.tokenId, token);
        }
      }
      await this.finish(batchId, written);
      await this.reloadLocked([...written.users.keys()], [...written.tokens.keys()]);
      this.logger.warn({ entries: entries.length }, 'finished a ledger batch written by a previous writer');
    } else {
      await this.redis.mgRequeueBatch(this.keys.queue, this.keys.processing, this.keys.batch, batchId);
      this.logger.warn({ entries: entries.length }, 'requeued an unwritten ledger batch');
    }
  }

  /**
   * Re-reads balances from PostgreSQL into their mirrors: after the account service changed them
   * (top-up, admin edit, transfer), and periodically as a safety net.
   */
  async reloadBalances(userIds: number[], tokenIds: number[]): Promise<void> {
    if (userIds.length === 0 && tokenIds.length === 0) return;
    // Outwaits a lock left by a writer that died holding it: given up, the change (a top-up, say)
    // would stay out of the mirrors until the next periodic refresh.
    const lock = await this.lock(true, LOCK_TTL_MS + LOCK_WAIT_MS);
    if (!lock) throw new Error('ledger lock not available');
    try {
      await this.recover();
      await this.reloadLocked(userIds, tokenIds);
    } finally {
      await this.unlock(lock);
    }
  }

  private async reloadLocked(userIds: number[], tokenIds: number[]): Promise<void> {
    const balances = await this.repository.readBalances(userIds, tokenIds);
    const keys: string[] = [];
    const values: string[] = [];
    for (const [id, quota] of balances.users) {
      keys.push(this.keys.user(id));
      values.push(quota.toString());
    }
    for (const [id, remain] of balances.tokens) {
      keys.push(this.keys.token(id));
      values.push(remain.toString());
    }
    if (keys.length > 0) await this.redis.mgReload(keys.length, ...keys, this.keys.instancePrefix, ...values);
  }

  private async lock(wait: boolean, waitMs = LOCK_WAIT_MS): Promise<string | undefined> {
    for (const stale of this.unreleased) await this.unlock(stale);
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + waitMs;
    for (;;) {
      if ((await this.redis.set(this.keys.lock, token, 'PX', LOCK_TTL_MS, 'NX')) === 'OK') return token;
      if (!wait || Date.now() > deadline) return undefined;
      await sleep(LOCK_RETRY_MS);
    }
  }

  /** Releases a lock of ours (a no-op once it expired or was released), or keeps it for the next attempt. */
  private async unlock(token: string): Promise<void> {
    try {
      await this.redis.mgUnlock(this.keys.lock, token);
      this.unreleased.delete(token);
    } catch {
      this.unreleased.add(token);
    }
  }
}
