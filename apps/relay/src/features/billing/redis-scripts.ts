import type { RedisClient } from '@modelgate/queue/connections';

/*
 * The Redis side of billing. Each user and each limited key has a balance mirror, a hash:
 *   db       its balance in PostgreSQL when last read, minus the ledger batches written since
 *            (below 0 for a debt: a charge beyond the balance is booked in full)
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

/**
 * Reservations, in order (a later one sees the holds of the earlier ones). KEYS (user, token) per
 * reservation. ARGV hold field, then (amount, limited key 1/0) per reservation. -> flat
 * {code, available} per reservation: 0 ok, 1/2 user/key mirror missing, 3/4 user/key short. A
 * balance at or below 0 (a debt: charges are never cut to fit) is short whatever the amount.
 */
const RESERVE = `${AVAILABLE}
local results = {}
for i = 1, #KEYS / 2 do
  local user, token = KEYS[2 * i - 1], KEYS[2 * i]
  local amountText = ARGV[2 * i]
  local amount = tonumber(amountText)
  local limited = ARGV[2 * i + 1] == '1'
  local code, shortBy = 0, 0
  local keyAvailable = 0
  if limited then keyAvailable = available(token) end
  local userAvailable = available(user)
  if limited and keyAvailable == nil then code = 2
  elseif userAvailable == nil then code = 1
  elseif limited and (keyAvailable < amount or keyAvailable <= 0) then code, shortBy = 4, keyAvailable
  elseif userAvailable < amount or userAvailable <= 0 then code, shortBy = 3, userAvailable
  else
    redis.call('HINCRBY', user, ARGV[1], amountText)
    if limited then redis.call('HINCRBY', token, ARGV[1], amountText) end
  end
  results[2 * i - 1] = code
  results[2 * i] = shortBy
end
return results
`;

const RELEASE_HOLD = `
local function releaseHold(key, field, negativeAmount)
  if redis.call('HEXISTS', key, field) == 0 then return end
  if redis.call('HINCRBY', key, field, negativeAmount) <= 0 then redis.call('HDEL', key, field) end
end
`;

/**
 * Settlements. KEYS queue, then (user, token, done marker) per settlement. ARGV hold field, marker
 * TTL ms, then (-reserved, limited, charge, entry) per settlement. -> flat {applied 1/0, the key's
 * balance net of unwritten charges (limited keys), or -1} per settlement. The marker makes a retry
 * after a lost reply (or ioredis resending on reconnect) a no-op.
 */
const SETTLE = `${RELEASE_HOLD}
local results = {}
local queued = {}
local field = ARGV[1]
for i = 1, (#KEYS - 1) / 3 do
  local user, token, done = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1]
  local negativeReserved, limited, charge = ARGV[4 * i - 1], ARGV[4 * i] == '1', ARGV[4 * i + 1]
  local applied, keyBalance = 0, -1
  if redis.call('SET', done, '1', 'NX', 'PX', ARGV[2]) then
    applied = 1
    releaseHold(user, field, negativeReserved)
    if limited then releaseHold(token, field, negativeReserved) end
    if charge ~= '0' then
      if redis.call('EXISTS', user) == 1 then redis.call('HINCRBY', user, 'pending', charge) end
      if limited and redis.call('EXISTS', token) == 1 then redis.call('HINCRBY', token, 'pending', charge) end
    end
    queued[#queued + 1] = ARGV[4 * i + 2]
    if limited then
      local mirror = redis.call('HMGET', token, 'db', 'pending')
      if mirror[1] then keyBalance = tonumber(mirror[1]) - tonumber(mirror[2] or '0') end
    end
  end
  results[2 * i - 1] = applied
  results[2 * i] = keyBalance
end
if #queued > 0 then redis.call('RPUSH', KEYS[1], unpack(queued)) end
return results
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
  mgReserve: { lua: RESERVE },
  mgSettle: { lua: SETTLE },
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
export type BillingRedis = RedisClient & BillingCommands;

interface BillingCommands {
  /** See RESERVE: the number of keys, then the keys, then the arguments. */
  mgReserve(numberOfKeys: number, ...keysThenArgs: Arg[]): Promise<number[]>;
  /** See SETTLE: the number of keys, then the keys, then the arguments. */
  mgSettle(numberOfKeys: number, ...keysThenArgs: Arg[]): Promise<number[]>;
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
export function withBillingScripts(redis: RedisClient): BillingRedis {
  const billing = redis as BillingRedis;
  if (typeof billing.mgReserve !== 'function') {
    for (const [name, definition] of Object.entries(SCRIPTS)) redis.defineCommand(name, definition);
  }
  return billing;
}

/**
 * Key names under the deployment prefix. On a Cluster every billing key carries one hash tag, so
 * they all live in one slot: a settlement moves the holds of many users and keys and queues their
 * ledger entries in one script, and the ledger's scripts touch the mirrors and the queue together,
 * which a Cluster runs only within one slot. Elsewhere the names stay as they were: the ledger queue
 * holds charges not yet written, which a rename would leave behind at an upgrade.
 */
export function billingKeys(prefix: string, cluster: boolean) {
  const base = cluster ? `${prefix}{billing}:` : prefix;
  return {
    user: (id: number) => `${base}bal:u:${id}`,
    token: (id: number) => `${base}bal:t:${id}`,
    queue: `${base}ledger:queue`,
    processing: `${base}ledger:processing`,
    batch: `${base}ledger:batch`,
    lock: `${base}ledger:lock`,
    /** Entries PostgreSQL refused for a data reason (JSON, oldest first). */
    deadLetters: `${base}ledger:dead-letters`,
    instancePrefix: `${base}relay:instance:`,
    /** Marks a settlement or release as applied (see SETTLE). */
    done: (operationId: string) => `${base}ledger:done:${operationId}`,
  };
}
export type BillingKeys = ReturnType<typeof billingKeys>;
