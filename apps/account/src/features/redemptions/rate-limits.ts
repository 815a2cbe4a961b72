import type { RateLimiterRedis } from 'rate-limiter-flexible';
import type { AccountDeps } from '../../deps';
import { redisRateLimiter } from '../auth/rate-limits';

/**
 * Failed redemptions, shared by every instance via Redis: guessing codes is hopeless at 32
 * random characters, but an account or address that keeps failing is stopped anyway.
 */
export interface RedemptionRateLimits {
  failuresByUser: RateLimiterRedis;
  /** Per address as `addressLimitKey` counts it, whatever the account: many accounts from one place. */
  failuresByAddress: RateLimiterRedis;
}

const FAILURE_WINDOW_SECONDS = 15 * 60;

const limits = new WeakMap<AccountDeps, RedemptionRateLimits>();

export function redemptionRateLimitsOf(deps: AccountDeps): RedemptionRateLimits {
  let found = limits.get(deps);
  if (!found) {
    const limiter = (name: string, points: number) => redisRateLimiter(deps, name, points, FAILURE_WINDOW_SECONDS, FAILURE_WINDOW_SECONDS);
    found = {
      failuresByUser: limiter('redeem-fail-user', 10),
      failuresByAddress: limiter('redeem-fail-address', 30),
    };
    limits.set(deps, found);
  }
  return found;
}
