import { AppError } from '@modelgate/errors';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { AccountDeps } from '../../deps';

/**
 * Brute-force limits on the unauthenticated endpoints (docs/api.md 3.1, 3.7), shared by every
 * instance via Redis. "Address" is the client address as `addressLimitKey` counts it (an IPv6 /64 as one).
 */
export interface AuthRateLimits {
  /** Every login attempt from one address. */
  loginByIp: RateLimiterRedis;
  /**
   * Failed logins per username and address: guessing one account's password from one place. Never
   * per username alone, or failures from anywhere would lock the owner out everywhere.
   */
  loginFailuresByUserAndAddress: RateLimiterRedis;
  /** Failed logins per address, whatever the username: guessing many accounts from one place. */
  loginFailuresByAddress: RateLimiterRedis;
  registerByIp: RateLimiterRedis;
  /** Registration attempts per username, whatever the IP: stops distributed probing or racing for one name. */
  registerByUsername: RateLimiterRedis;
  /** Second-step attempts per address; per user, the growing 2FA lockout applies. */
  twoFactorByIp: RateLimiterRedis;
}

const limits = new WeakMap<AccountDeps, AuthRateLimits>();

/** `points` attempts per `durationSeconds` (then blocked `blockSeconds`), counted in Redis under `name`. */
export function redisRateLimiter(deps: AccountDeps, name: string, points: number, durationSeconds: number, blockSeconds = 0): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: deps.redis,
    keyPrefix: `${deps.env.REDIS_PREFIX}rl:${name}`,
    points,
    duration: durationSeconds,
    blockDuration: blockSeconds,
  });
}

export function rateLimitsOf(deps: AccountDeps): AuthRateLimits {
  let found = limits.get(deps);
  if (!found) {
    const limiter = (name: string, points: number, durationSeconds: number, blockSeconds = 0) =>
      redisRateLimiter(deps, name, points, durationSeconds, blockSeconds);
    found = {
      loginByIp: limiter('login-ip', 30, 60, 5 * 60),
      loginFailuresByUserAndAddress: limiter('login-fail-user-address', 10, 15 * 60, 15 * 60),
      loginFailuresByAddress: limiter('login-fail-address', 20, 15 * 60, 15 * 60),
      registerByIp: limiter('register-ip', 10, 60 * 60),
      registerByUsername: limiter('register-user', 5, 60 * 60),
      twoFactorByIp: limiter('2fa-ip', 30, 60, 5 * 60),
    };
    limits.set(deps, found);
  }
  return found;
}

function tooMany(res: RateLimiterRes): AppError {
  return new AppError('rate_limited', 'too many attempts, try again later', { retryAfter: Math.ceil(res.msBeforeNext / 1000) });
}

function redisDown(err: unknown): AppError {
  return new AppError('service_unavailable', 'rate limiter unavailable', { cause: err });
}

/** Counts one attempt; 429 with Retry-After once the limit is reached. */
/** Mails of one kind (reset links, verification codes) per client address and per address mailed to. */
interface MailRateLimits {
  byAddress: RateLimiterRedis;
  byEmail: RateLimiterRedis;
}

const mailLimits = new WeakMap<AccountDeps, Map<string, MailRateLimits>>();

/**
 * Counts one mail of `kind` (20 an hour per client address, 5 an hour per address mailed to, so
 * nobody is flooded with them), or answers 429 with `Retry-After`.
 */
export async function consumeMailLimits(deps: AccountDeps, kind: string, clientAddressKey: string, email: string): Promise<void> {
  let kinds = mailLimits.get(deps);
  if (!kinds) {
    kinds = new Map();
    mailLimits.set(deps, kinds);
  }
  let found = kinds.get(kind);
  if (!found) {
    found = { byAddress: redisRateLimiter(deps, `${kind}-ip`, 20, 60 * 60), byEmail: redisRateLimiter(deps, `${kind}-email`, 5, 60 * 60) };
    kinds.set(kind, found);
  }
  await consumeOrThrow(found.byAddress, clientAddressKey);
  await consumeOrThrow(found.byEmail, email.toLowerCase());
}

export async function consumeOrThrow(limiter: RateLimiterRedis, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) throw tooMany(err);
    throw redisDown(err);
  }
}

/** 429 when the key already used up its points, without counting an attempt. */
export async function ensureNotLimited(limiter: RateLimiterRedis, key: string): Promise<void> {
  let res: RateLimiterRes | null;
  try {
    res = await limiter.get(key);
  } catch (err) {
    throw redisDown(err);
  }
  if (res && res.consumedPoints >= limiter.points) throw tooMany(res);
}

/** Counts a failure without failing the current request (it already fails for its own reason). */
export async function recordFailure(limiter: RateLimiterRedis, key: string): Promise<void> {
  await limiter.consume(key).catch(() => undefined);
}
