import type { Redis } from 'ioredis';

/*
 * The Redis side of billing. Each user and each limited key has a balance mirror, a hash:
 *   db       its balance in PostgreSQL when last read, minus the ledger batches written since
 *   pending  charges settled but not yet written to PostgreSQL (entries in the ledger queue)
 *   h:<id>   amounts reserved by in-flight requests of relay instance <id>
 * available = db - pending - sum(h:*). Scripts run atomically, so concurrent reservations can
 * never take more than is available. Integers travel as strings: Lua prints large numbers as
 * floats, which HINCRBY would refuse.
 */

const AVAILABLE = `
local function available(key)
  local values = redis.call('HGETALL', key)
  if #values == 0 then return nil end
  local db, used = 0, 0
  for i = 1, #values, 2 do
    local name = values[i]
    if name == 'db' then db = tonumber(values[i + 1])
    elseif name == 'pending' or string.sub(name, 1, 2) == 'h:' then used = used + tonumber(values[i + 1]) end
  end
  return db - used
end
`;

/** KEYS user, token. ARGV amount, hold field, limited key (1/0). -> {code, available}: 0 ok, 1/2 user/key mirror missing, 3/4 user/key short. */
const RESERVE = `${AVAILABLE}
local amount = tonumber(ARGV[1])
local limited = ARGV[3] == '1'
local keyAvailable = 0
if limited then
  keyAvailable = available(KEYS[2])
  if keyAvailable == nil then return {2, 0} end
end
local userAvailable = available(KEYS[1])
if userAvailable == nil then return {1, 0} end
if limited and keyAvailable < amount then return {4, keyAvailable} end
if userAvailable < amount then return {3, userAvailable} end
redis.call('HINCRBY', KEYS[1], ARGV[2], ARGV[1])
if limited then redis.call('HINCRBY', KEYS[2], ARGV[2], ARGV[1]) end
return {0, 0}
`;

const RELEASE_HOLD = `
local function releaseHold(key, field, negativeAmount)
  if redis.call('HEXISTS', key, field) == 0 then return end
  if redis.call('HINCRBY', key, field, negativeAmount) <= 0 then redis.call('HDEL', key, field) end
end
`;

/**
 * KEYS user, token, queue, done marker. ARGV -reserved, hold field, limited, charge, entry, marker
 * TTL ms. -> {applied 1/0, the key's balance net of unwritten charges (limited keys), or -1}.
 * The marker makes a retry after a lost reply (or ioredis resending on reconnect) a no-op.
 */
const SETTLE = `${RELEASE_HOLD}
if not redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[6]) then return {0, -1} end
releaseHold(KEYS[1], ARGV[2], ARGV[1])
if ARGV[3] == '1' then releaseHold(KEYS[2], ARGV[2], ARGV[1]) end
if ARGV[4] ~= '0' then
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HINCRBY', KEYS[1], 'pending', ARGV[4]) end
  if ARGV[3] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HINCRBY', KEYS[2], 'pending', ARGV[4]) end
end
redis.call('RPUSH', KEYS[3], ARGV[5])
if ARGV[3] == '1' then
  local mirror = redis.call('HMGET', KEYS[2], 'db', 'pending')
  if mirror[1] then return {1, tonumber(mirror[1]) - tonumber(mirror[2] or '0')} end
end
return {1, -1}
`;

/** KEYS user, token, done marker. ARGV -reserved, hold field, limited, marker TTL ms. Idempotent like SETTLE. */
const RELEASE = `${RELEASE_HOLD}
if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[4]) then return 0 end
releaseHold(KEYS[1], ARGV[2], ARGV[1])
if ARGV[3] == '1' then releaseHold(KEYS[2], ARGV[2], ARGV[1]) end
return 1
`;

/** KEYS mirror. ARGV db balance. Creates the mirror unless another request already did. */
const SEED = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'db', ARGV[1], 'pending', '0')
return 1
`;

/**
 * KEYS mirrors. ARGV instance key prefix, then one db balance per key. Replaces the db balance of
 * existing mirrors (run under the ledger lock, so no batch is half written) and drops the holds of
 * relay instances that are gone (crashed mid-request).
 */
const RELOAD = `
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then
    redis.call('HSET', key, 'db', ARGV[i + 1])
    for _, name in ipairs(redis.call('HKEYS', key)) do
      if string.sub(name, 1, 2) == 'h:' and redis.call('EXISTS', ARGV[1] .. string.sub(name, 3)) == 0 then
        redis.call('HDEL', key, name)
      end
    end
  end
end
return 1
`;

/** KEYS queue, processing, batch id, lock. ARGV lock token, max entries, batch id. Moves a batch out of the queue. */
const TAKE_BATCH = `
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return false end
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
local entries = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #entries == 0 then return {} end
redis.call('LTRIM', KEYS[1], #entries, -1)
for i = 1, #entries, 500 do
  redis.call('RPUSH', KEYS[2], unpack(entries, i, math.min(i + 499, #entries)))
end
redis.call('SET', KEYS[3], ARGV[3])
return entries
`;

/**
 * KEYS processing, batch id. ARGV batch id, then (mirror key, -pending, -db) triples. Applies a
 * written batch to the mirrors, once: a batch already finished or requeued is left alone.
 */
const FINISH_BATCH = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 3 do
  if redis.call('EXISTS', ARGV[i]) == 1 then
    redis.call('HINCRBY', ARGV[i], 'pending', ARGV[i + 1])
    redis.call('HINCRBY', ARGV[i], 'db', ARGV[i + 2])
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`;

/**
 * KEYS processing, batch id, dead letters. ARGV batch id, then (mirror key, -pending) pairs. Sets
 * aside a one-entry batch PostgreSQL refuses for a data reason: it leaves the queue and the
 * mirrors' pending charges, and is kept in the dead-letter list for a human to look at.
 */
const DEAD_LETTER_BATCH = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do
  if redis.call('EXISTS', ARGV[i]) == 1 then redis.call('HINCRBY', ARGV[i], 'pending', ARGV[i + 1]) end
end
for _, entry in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do redis.call('RPUSH', KEYS[3], entry) end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`;

/** KEYS queue, processing, batch id. ARGV batch id. Puts an unwritten batch back at the head of the queue. */
const REQUEUE_BATCH = `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
local entries = redis.call('LRANGE', KEYS[2], 0, -1)
for i = #entries, 1, -1 do redis.call('LPUSH', KEYS[1], entries[i]) end
redis.call('DEL', KEYS[2], KEYS[3])
return 1
`;

/** KEYS lock. ARGV token. */
const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

const SCRIPTS = {
  mgReserve: { numberOfKeys: 2, lua: RESERVE },
  mgSettle: { numberOfKeys: 4, lua: SETTLE },
  mgRelease: { numberOfKeys: 3, lua: RELEASE },
  mgSeed: { numberOfKeys: 1, lua: SEED },
  mgReload: { lua: RELOAD },
  mgTakeBatch: { numberOfKeys: 4, lua: TAKE_BATCH },
  mgFinishBatch: { numberOfKeys: 2, lua: FINISH_BATCH },
  mgRequeueBatch: { numberOfKeys: 3, lua: REQUEUE_BATCH },
  mgDeadLetterBatch: { numberOfKeys: 3, lua: DEAD_LETTER_BATCH },
  mgUnlock: { numberOfKeys: 1, lua: UNLOCK },
} as const;

type Arg = string | number;

/** The scripts as typed commands (ioredis sends EVALSHA and falls back to EVAL). */
export interface BillingRedis extends Redis {
  mgReserve(user: string, token: string, amount: Arg, field: string, limited: Arg): Promise<[number, number]>;
  mgSettle(
    user: string, token: string, queue: string, done: string,
    negReserved: Arg, field: string, limited: Arg, charge: Arg, entry: string, doneTtlMs: Arg,
  ): Promise<[number, number]>;
  mgRelease(user: string, token: string, done: string, negReserved: Arg, field: string, limited: Arg, doneTtlMs: Arg): Promise<number>;
  mgSeed(key: string, db: Arg): Promise<number>;
  mgReload(numberOfKeys: number, ...keysThenArgs: Arg[]): Promise<number>;
  mgTakeBatch(queue: string, processing: string, batch: string, lock: string, lockToken: string, max: Arg, batchId: string): Promise<string[] | null>;
  mgFinishBatch(processing: string, batch: string, batchId: string, ...triples: Arg[]): Promise<number>;
  mgRequeueBatch(queue: string, processing: string, batch: string, batchId: string): Promise<number>;
  mgDeadLetterBatch(processing: string, batch: string, deadLetters: string, batchId: string, ...pairs: Arg[]): Promise<number>;
  mgUnlock(lock: string, token: string): Promise<number>;
}

/** Registers the billing scripts on a connection (idempotent). */
export function withBillingScripts(redis: Redis): BillingRedis {
  const billing = redis as BillingRedis;
  if (typeof billing.mgReserve !== 'function') {
    for (const [name, definition] of Object.entries(SCRIPTS)) redis.defineCommand(name, definition);
  }
  return billing;
}

/** Key names under the deployment prefix. */
export function billingKeys(prefix: string) {
  return {
    user: (id: number) => `${prefix}bal:u:${id}`,
    token: (id: number) => `${prefix}bal:t:${id}`,
    queue: `${prefix}ledger:queue`,
    processing: `${prefix}ledger:processing`,
    batch: `${prefix}ledger:batch`,
    lock: `${prefix}ledger:lock`,
    /** Entries PostgreSQL refused for a data reason (JSON, oldest first). */
    deadLetters: `${prefix}ledger:dead-letters`,
    instancePrefix: `${prefix}relay:instance:`,
    /** Marks a settlement or release as applied (see SETTLE). */
    done: (operationId: string) => `${prefix}ledger:done:${operationId}`,
  };
}
export type BillingKeys = ReturnType<typeof billingKeys>;
