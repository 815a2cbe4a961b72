import { AppError } from '@modelgate/errors';
import { addressLimitKey } from '@modelgate/schemas';
import type { RedisClient } from '@modelgate/queue/connections';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Bounds the memory a flood of addresses can take here; past it the oldest entry goes (Redis still counts). */
const MAX_BLOCKED_ADDRESSES = 10_000;

/**
 * `RELAY_KEY_FAILURES_PER_MINUTE` (docs/api.md 3.7): failed key checks (unknown, malformed or
 * disabled keys) per client address (an IPv6 /64 as one), counted in Redis for every relay instance.
 * An address past the limit gets 429, and a key the relay does not hold in memory is then not looked
 * up in the database: guessing keys costs the guesser, not PostgreSQL.
 *
 * Only failures are counted, so a valid key never pays a Redis round trip here. An address found
 * over the limit is remembered in this process until its window ends, so its further attempts cost
 * no Redis round trip either. With Redis unreachable nothing is counted: the key checks go on as
 * without the limit (the negative cache of KeyCache still spares the database repeated lookups).
 */
export class KeyFailureLimit {
  private readonly limiter: RateLimiterRedis;
  /** Address key -> epoch ms its window ends, for addresses known to be over the limit. */
  private readonly blockedUntil = new Map<string, number>();

  constructor(redis: RedisClient, prefix: string, private readonly perMinute: number) {
    this.limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}rl:key-failures`, points: perMinute, duration: 60 });
  }

  /**
   * Before a database lookup of a key: counts it as a failure up front, so that concurrent lookups
   * from one address can never outnumber the limit; 429 when the address is past it. Resolves true
   * when a point was taken (give it back with `refund` if the key turns out good), false when Redis
   * could not count.
   */
  async admit(ip: string | undefined): Promise<boolean> {
    const address = addressLimitKey(ip);
    this.throwIfBlocked(address);
    try {
      await this.limiter.consume(address);
      return true;
    } catch (err) {
      if (err instanceof RateLimiterRes) throw this.block(address, err.msBeforeNext);
      return false;
    }
  }

  /** Gives back the point `admit` took for a lookup that found a good key. */
  refund(ip: string | undefined): void {
    this.limiter.reward(addressLimitKey(ip), 1).catch(() => undefined);
  }

  /**
   * Counts one failed key check of the address. Resolves when the request may get its own answer
   * (401), rejects with the 429 when this failure took the address past its limit.
   */
  async count(ip: string | undefined): Promise<void> {
    const address = addressLimitKey(ip);
    this.throwIfBlocked(address);
    try {
      await this.limiter.consume(address);
    } catch (err) {
      if (err instanceof RateLimiterRes) throw this.block(address, err.msBeforeNext);
    }
  }

  private throwIfBlocked(address: string): void {
    const until = this.blockedUntil.get(address);
    if (until === undefined) return;
    const remainingMs = until - Date.now();
    if (remainingMs > 0) throw this.refusal(remainingMs);
    this.blockedUntil.delete(address);
  }

  private block(address: string, msBeforeNext: number): AppError {
    if (this.blockedUntil.size >= MAX_BLOCKED_ADDRESSES) {
      const oldest = this.blockedUntil.keys().next().value;
      if (oldest !== undefined) this.blockedUntil.delete(oldest);
    }
    this.blockedUntil.set(address, Date.now() + msBeforeNext);
    return this.refusal(msBeforeNext);
  }

  private refusal(msBeforeNext: number): AppError {
    return new AppError('rate_limit_exceeded', `too many failed API key checks from this address: at most ${this.perMinute} a minute`, {
      retryAfter: msBeforeNext / 1000,
    });
  }
}
