import { randomBytes } from 'node:crypto';
import { sha256Hex } from '@modelgate/db';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';

/** How long a mailed reset link works (docs/api.md 3.9.1). */
export const RESET_TOKEN_TTL_MS = 15 * 60 * 1000;

/**
 * Deletes the user's token if `ARGV[1]` is its hash, and says whether it was still valid at
 * `ARGV[2]` (ms). A wrong token deletes nothing, so guessing cannot void the owner's link.
 */
const CONSUME = `
local stored = redis.call('GET', KEYS[1])
if not stored then return 0 end
local space = string.find(stored, ' ', 1, true)
if string.sub(stored, 1, space - 1) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if tonumber(string.sub(stored, space + 1)) <= tonumber(ARGV[2]) then return 0 end
return 1`;

/** One pending reset per user: a new one replaces it. */
function keyOf(deps: AccountDeps, userId: number): string {
  return `${deps.env.REDIS_PREFIX}pwreset:${userId}`;
}

/** A new token for the user (256 random bits, base64url); Redis keeps only its hash and expiry. */
export async function issueResetToken(deps: AccountDeps, userId: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = nowMs(deps) + RESET_TOKEN_TTL_MS;
  await deps.redis.set(keyOf(deps, userId), `${sha256Hex(token)} ${expiresAt}`, 'PX', RESET_TOKEN_TTL_MS);
  return token;
}

/** True once for the user's current, unexpired token; false for any other, and for it afterwards. */
export async function consumeResetToken(deps: AccountDeps, userId: number, token: string): Promise<boolean> {
  const valid = await deps.redis.eval(CONSUME, 1, keyOf(deps, userId), sha256Hex(token), nowMs(deps));
  return valid === 1;
}
