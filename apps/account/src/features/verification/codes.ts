import { createHmac, randomInt } from 'node:crypto';
import { sha256Hex } from '@modelgate/db';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';

/** How long a mailed code works (docs/api.md 3.9.1). */
export const CODE_TTL_MS = 10 * 60 * 1000;
/** Wrong guesses a code survives: the fifth voids it, so a code cannot be found by trying. */
export const MAX_WRONG_GUESSES = 5;

/**
 * `ARGV[1]` is the code's HMAC, `ARGV[2]` now (ms), `ARGV[3]` the guesses allowed. 1 (and the code
 * deleted) when it matches the unexpired code; 0 otherwise, counting a wrong guess.
 */
const CHECK = `
local stored = redis.call('HMGET', KEYS[1], 'code', 'exp')
if not stored[1] then return 0 end
if tonumber(stored[2]) <= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 0
end
if stored[1] == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
if redis.call('HINCRBY', KEYS[1], 'wrong', 1) >= tonumber(ARGV[3]) then redis.call('DEL', KEYS[1]) end
return 0`;

/** One code per address, whatever its case. */
function keyOf(deps: AccountDeps, email: string): string {
  return `${deps.env.REDIS_PREFIX}verify:${sha256Hex(email.toLowerCase())}`;
}

/** Keyed, so that reading Redis does not give the codes away (a plain hash of 6 digits would). */
function digestOf(deps: AccountDeps, code: string): string {
  return createHmac('sha256', deps.env.SESSION_SECRET).update(code).digest('hex');
}

/** A new 6-digit code for the address, replacing any earlier one (and its count of wrong guesses). */
export async function issueCode(deps: AccountDeps, email: string): Promise<string> {
  const code = String(randomInt(1_000_000)).padStart(6, '0');
  const key = keyOf(deps, email);
  await deps.redis
    .multi()
    .del(key)
    .hset(key, { code: digestOf(deps, code), exp: nowMs(deps) + CODE_TTL_MS, wrong: 0 })
    .pexpire(key, CODE_TTL_MS)
    .exec();
  return code;
}

/** True once for the address's current, unexpired code. */
export async function consumeCode(deps: AccountDeps, email: string, code: string): Promise<boolean> {
  const valid = await deps.redis.eval(CHECK, 1, keyOf(deps, email), digestOf(deps, code.trim()), nowMs(deps), MAX_WRONG_GUESSES);
  return valid === 1;
}
