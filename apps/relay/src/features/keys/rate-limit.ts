import { AppError } from '@modelgate/errors';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** `RELAY_KEY_RATE_LIMIT_PER_MINUTE`: requests per key per minute, counted in Redis for every relay instance. */
export class KeyRateLimit {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: Redis, prefix: string, private readonly perMinute: number) {
    this.limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}rl:key`, points: perMinute, duration: 60 });
  }

  /** Counts one request of the key, or answers 429 with the seconds until the next one is allowed. */
  async consume(tokenId: number): Promise<void> {
    try {
      await this.limiter.consume(String(tokenId));
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        throw new AppError('rate_limit_exceeded', `this API key may make ${this.perMinute} requests per minute`, {
          retryAfter: err.msBeforeNext / 1000,
        });
      }
      throw new AppError('service_unavailable', 'rate limiting is temporarily unavailable', { cause: err });
    }
  }
}
