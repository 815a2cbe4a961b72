import type { RedisClient } from '@modelgate/queue/connections';

/*
 * The Redis side of the limits per key and per group user, and of the key budgets (docs/api.md
 * 3.9.3, 3.9.4). Every key of one owner starts with `<prefix>lim:{u<id>}`, so they share its hash
 * tag and a script touches one cluster slot. For each subject (the key `k<id>`; the owner within
 * the key's group `g:<group>`):
 *   :w   its window: a hash of one-second buckets `r<second>` (requests) and `t<second>` (tokens),
 *        with `r` and `t` the totals of the buckets from second `from` on. Buckets that leave the
 *        last 60 seconds are subtracted and deleted as the window moves, so a check reads three
 *        fields whatever the traffic.
 *   :c   sorted set lease -> expiry ms: the calls in flight (when it limits them). A lease lapses
 *        unless its relay renews it, so the calls of a relay that died stop counting (and RENEW
 *        removes lapsed ones).
 *   :s   hash grant -> `<slots>:<expiry ms>`: the concurrency slots granted to relays (see grants
 *        below), counted as in flight until they lapse or are given back.
 * Per key and budget period, `k<id>:b:<period>:<start>` is a hash: `spent` (charges settled in the
 * period), `held` (what the calls in flight hold) and `checked` (the second lapsed holds were last
 * looked for), and `...:c` the holds as leases `<lease>:<amount>`: a hold lapses with its lease,
 * and both keys expire after the period. Time is Redis's clock, the same for every relay.
 *
 * Grants: while a key is far from its limits, an admission may also take slices of them for its
 * relay (requests and tokens counted in the window now, slots in `:s`, an amount held on the budget
 * as a lease `<grant>:<amount>`). The relay admits calls into the slices without asking Redis, and
 * gives back what its calls did not use within about a second. A slice is granted only while every
 * limit keeps at least half its room after it, so near a limit every call is counted here, one by
 * one, exactly.
 */

const CLOCK = `
local clock = redis.call('TIME')
local second = tonumber(clock[1])
local nowMs = second * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

/**
 * The ends, then the admissions, of one owner's calls in one event-loop turn (an end first frees
 * what an admission of the same turn may take). KEYS the owner's prefix: every key used is that
 * prefix, ':' and a suffix (same hash tag, same slot). ARGV lease ms, window TTL ms, then the
 * operations: each a line of space-separated fields, then one argument per subject naming it and,
 * when the call has a budget, the budget mirror's name:
 *
 * `e subjects lease bucket delta budgeted charge held`, then per subject `corrected leased` (1/0):
 *   the end of an admitted call. The tokens counted in second `bucket` are corrected by `delta`
 *   (actual - estimated) while that second is in the window; the leases go, the hold of `held` too,
 *   and the charge joins the period's spend.
 * `a subjects tokens lease amount quota expires grant budgetSlice`, then per subject
 *   `rpm tpm concurrency requestSlice tokenSlice slotSlice` (0: none): an admission; `amount` is
 *   held on the budget of `quota` (-1: none), whose keys expire at `expires` (epoch ms). All or
 *   nothing: a refused call counts nowhere; a later admission sees what the earlier ones counted.
 *   Unless `grant` is '-', an admitted call also takes the slices for that grant, if every limit
 *   (and the budget) keeps half its room after them.
 * `r subjects grant bucket budgeted charged budgetSlice calls`, then per subject `requests tokens
 *   slotted` (what to add to the window: minus what the grant's calls left unused), then per call
 *   still in flight `lease held`: gives a grant back. Its slots and budget slice go; the calls still
 *   in flight take a lease each (and their hold), as if admitted one by one; `charged` (what its
 *   ended calls cost) joins the period's spend.
 *
 * -> 11 numbers per admission: code (0 admitted, 1 requests, 2 tokens, 3 more tokens than the
 * limit, 4 concurrency, 5 budget short, 6 budget mirror missing), the subject refusing (1-based),
 * seconds until the window has room, the tightest requests limit and what it leaves, the same for
 * tokens (limit 0: none), the second the call was counted in, the budget left before the call,
 * 1 when the call leaves less than half of a concurrency, tokens or budget limit (its end is then
 * urgent: what it frees may be wanted at once), else 0, and 1 when the grant was made, else 0.
 */
const TURN = `${CLOCK}
local owner = KEYS[1] .. ':'
local leaseMs = tonumber(ARGV[1])
local windowTtl = ARGV[2]
local oldest = second - 59

local function fields(line)
  local list = {}
  for field in string.gmatch(line, '%S+') do list[#list + 1] = field end
  return list
end

-- A subject's requests and tokens in the last 60 seconds, and whether its window has a start yet.
local function window(key)
  local state = redis.call('HMGET', key, 'r', 't', 'from')
  if not state[3] then
    -- Corrections that outlived their window (it expired) start nothing.
    if state[1] or state[2] then redis.call('DEL', key) end
    return 0, 0, false
  end
  local requests, tokens, from = tonumber(state[1] or '0'), tonumber(state[2] or '0'), tonumber(state[3])
  if from < oldest then
    if oldest - from >= 60 then
      redis.call('DEL', key)
      return 0, 0, false
    end
    local stale = {}
    for bucket = from, oldest - 1 do
      stale[#stale + 1] = 'r' .. bucket
      stale[#stale + 1] = 't' .. bucket
    end
    local counts = redis.call('HMGET', key, unpack(stale))
    for i = 1, #stale, 2 do
      requests = requests - tonumber(counts[i] or '0')
      tokens = tokens - tonumber(counts[i + 1] or '0')
    end
    redis.call('HDEL', key, unpack(stale))
    redis.call('HSET', key, 'r', requests, 't', tokens, 'from', oldest)
    -- Renewed as the window moves, at least once a second while it is used.
    redis.call('PEXPIRE', key, windowTtl)
  end
  return requests, tokens, true
end

-- Seconds until enough of the window ('r' or 't' buckets) has passed for need more within limit.
local function secondsUntilRoom(key, kind, total, need, limit)
  local names = {}
  for bucket = oldest, second do names[#names + 1] = kind .. bucket end
  local counts = redis.call('HMGET', key, unpack(names))
  for i = 1, #names do
    if counts[i] then
      total = total - tonumber(counts[i])
      if total + need <= limit then return oldest + i - 1 + 60 - second end
    end
  end
  return 60
end

-- Calls in flight: live leases, and the live slots granted to relays.
local function inFlight(leases, grants)
  local count = redis.call('ZCOUNT', leases, nowMs, '+inf')
  local granted = redis.call('HGETALL', grants)
  for i = 1, #granted, 2 do
    local slots, expiry = string.match(granted[i + 1], '^(%d+):(%d+)$')
    if tonumber(expiry) > nowMs then count = count + tonumber(slots) else redis.call('HDEL', grants, granted[i]) end
  end
  return count
end

local results = {}
local a = 3
while a <= #ARGV do
  local f = fields(ARGV[a])
  local subjectCount = tonumber(f[2])
  local names = {}
  for s = 1, subjectCount do names[s] = owner .. ARGV[a + s] end
  a = a + 1 + subjectCount
  if f[1] == 'e' then
    local lease, bucket, delta, budgeted, charge, held = f[3], tonumber(f[4]), tonumber(f[5]), f[6] == '1', f[7], f[8]
    for s = 1, subjectCount do
      if f[7 + 2 * s] == '1' and bucket >= oldest then
        local w = names[s] .. ':w'
        redis.call('HINCRBY', w, 't' .. bucket, delta)
        redis.call('HINCRBY', w, 't', delta)
      end
      if f[8 + 2 * s] == '1' then redis.call('ZREM', names[s] .. ':c', lease) end
    end
    if budgeted then
      local budget = owner .. ARGV[a]
      a = a + 1
      -- The hold is there unless it lapsed (and was given back then).
      local holding = redis.call('ZREM', budget .. ':c', lease .. ':' .. held) == 1
      if holding then redis.call('HINCRBY', budget, 'held', '-' .. held) end
      if charge ~= '0' and (holding or redis.call('EXISTS', budget) == 1) then redis.call('HINCRBY', budget, 'spent', charge) end
    end
  elseif f[1] == 'r' then
    local grant, bucket, budgeted, charged, budgetSlice, calls = f[3], tonumber(f[4]), f[5] == '1', f[6], f[7], tonumber(f[8])
    local callsAt = 9 + 3 * subjectCount
    for s = 1, subjectCount do
      local requests, tokens, slotted = f[6 + 3 * s], f[7 + 3 * s], f[8 + 3 * s] == '1'
      if bucket >= oldest then
        local w = names[s] .. ':w'
        if requests ~= '0' then
          redis.call('HINCRBY', w, 'r' .. bucket, requests)
          redis.call('HINCRBY', w, 'r', requests)
        end
        if tokens ~= '0' then
          redis.call('HINCRBY', w, 't' .. bucket, tokens)
          redis.call('HINCRBY', w, 't', tokens)
        end
      end
      if slotted then
        local leases = names[s] .. ':c'
        redis.call('HDEL', names[s] .. ':s', grant)
        for c = 0, calls - 1 do redis.call('ZADD', leases, nowMs + leaseMs, f[callsAt + 2 * c]) end
        if calls > 0 then redis.call('PEXPIRE', leases, 2 * leaseMs) end
      end
    end
    if budgeted then
      local budget = owner .. ARGV[a]
      local holds = budget .. ':c'
      a = a + 1
      local holding = redis.call('ZREM', holds, grant .. ':' .. budgetSlice) == 1
      if holding then
        redis.call('HINCRBY', budget, 'held', '-' .. budgetSlice)
        for c = 0, calls - 1 do
          local held = f[callsAt + 2 * c + 1]
          if held ~= '0' then
            redis.call('ZADD', holds, nowMs + leaseMs, f[callsAt + 2 * c] .. ':' .. held)
            redis.call('HINCRBY', budget, 'held', held)
          end
        end
      end
      if charged ~= '0' and (holding or redis.call('EXISTS', budget) == 1) then redis.call('HINCRBY', budget, 'spent', charged) end
    end
  else
    local tokens, lease, amount, quota, expires = tonumber(f[3]), f[4], f[5], tonumber(f[6]), f[7]
    local grant, budgetSlice = f[8], tonumber(f[9])
    local subjects = {}
    for s = 1, subjectCount do
      local at = 4 + 6 * s
      subjects[s] = {
        w = names[s] .. ':w', c = names[s] .. ':c', slots = names[s] .. ':s',
        rpm = tonumber(f[at]), tpm = tonumber(f[at + 1]), concurrency = tonumber(f[at + 2]),
        requestSlice = tonumber(f[at + 3]), tokenSlice = tonumber(f[at + 4]), slotSlice = tonumber(f[at + 5]),
        requests = 0, tokens = 0, started = false, inFlight = 0,
      }
    end
    local budget, holds = nil, nil
    if quota >= 0 then
      budget = owner .. ARGV[a]
      holds = budget .. ':c'
      a = a + 1
    end

    local code, which, wait, available, urgent = 0, 0, 0, 0, 0
    for s, subject in ipairs(subjects) do
      if subject.rpm > 0 or subject.tpm > 0 then
        subject.requests, subject.tokens, subject.started = window(subject.w)
      end
      if code == 0 and subject.rpm > 0 and subject.requests + 1 > subject.rpm then
        code, which, wait = 1, s, secondsUntilRoom(subject.w, 'r', subject.requests, 1, subject.rpm)
      end
      if code == 0 and subject.tpm > 0 then
        if tokens > subject.tpm then
          code, which, wait = 3, s, 60
        elseif subject.tokens + tokens > subject.tpm then
          code, which, wait = 2, s, secondsUntilRoom(subject.w, 't', subject.tokens, tokens, subject.tpm)
        end
      end
      if subject.concurrency > 0 then
        subject.inFlight = inFlight(subject.c, subject.slots)
        if code == 0 and subject.inFlight >= subject.concurrency then code, which, wait = 4, s, 1 end
      end
    end
    local heldBefore = 0
    if code == 0 and budget then
      local mirror = redis.call('HMGET', budget, 'spent', 'held', 'checked')
      if not mirror[1] then
        code = 6
      else
        local spent = tonumber(mirror[1])
        heldBefore = tonumber(mirror[2] or '0')
        if tonumber(mirror[3] or '0') < second then
          -- At most once a second: the holds of lapsed leases are given back.
          redis.call('HSET', budget, 'checked', second)
          local lapsed = redis.call('ZRANGEBYSCORE', holds, '-inf', nowMs)
          if #lapsed > 0 then
            local freed = 0
            for _, gone in ipairs(lapsed) do freed = freed + tonumber(string.match(gone, ':(%d+)$') or '0') end
            redis.call('ZREM', holds, unpack(lapsed))
            heldBefore = redis.call('HINCRBY', budget, 'held', string.format('%d', -freed))
          end
        end
        available = quota - spent - heldBefore
        if spent >= quota or available < tonumber(amount) then code = 5 end
      end
    end

    local admitted = code == 0
    if admitted then
      for _, subject in ipairs(subjects) do
        if subject.rpm > 0 then
          redis.call('HINCRBY', subject.w, 'r' .. second, 1)
          redis.call('HINCRBY', subject.w, 'r', 1)
        end
        if subject.tpm > 0 and tokens > 0 then
          redis.call('HINCRBY', subject.w, 't' .. second, tokens)
          redis.call('HINCRBY', subject.w, 't', tokens)
          if 2 * (subject.tpm - subject.tokens - tokens) < subject.tpm then urgent = 1 end
        end
        if (subject.rpm > 0 or subject.tpm > 0) and not subject.started then
          redis.call('HSET', subject.w, 'from', oldest)
          redis.call('PEXPIRE', subject.w, windowTtl)
        end
        if subject.concurrency > 0 then
          redis.call('ZADD', subject.c, nowMs + leaseMs, lease)
          redis.call('PEXPIRE', subject.c, 2 * leaseMs)
          if 2 * (subject.inFlight + 1) > subject.concurrency then urgent = 1 end
        end
      end
      if budget then
        redis.call('HINCRBY', budget, 'held', amount)
        redis.call('ZADD', holds, nowMs + leaseMs, lease .. ':' .. amount)
        -- Nothing held before: the set is new and needs its expiry.
        if heldBefore == 0 then redis.call('PEXPIREAT', holds, expires) end
        if 2 * (available - tonumber(amount)) < quota then urgent = 1 end
      end
    end

    local granted = 0
    if admitted and grant ~= '-' then
      -- Every limit, and the budget, keeps at least half its room after the slices.
      local roomy = true
      for _, subject in ipairs(subjects) do
        if subject.rpm > 0 and (subject.requestSlice <= 0 or 2 * (subject.rpm - subject.requests - 1 - subject.requestSlice) < subject.rpm) then roomy = false end
        if subject.tpm > 0 and (subject.tokenSlice <= 0 or 2 * (subject.tpm - subject.tokens - tokens - subject.tokenSlice) < subject.tpm) then roomy = false end
        if subject.concurrency > 0 and (subject.slotSlice <= 0 or 2 * (subject.concurrency - subject.inFlight - 1 - subject.slotSlice) < subject.concurrency) then roomy = false end
      end
      if budget and (budgetSlice <= 0 or 2 * (available - tonumber(amount) - budgetSlice) < quota) then roomy = false end
      if roomy then
        granted = 1
        for _, subject in ipairs(subjects) do
          if subject.rpm > 0 then
            redis.call('HINCRBY', subject.w, 'r' .. second, subject.requestSlice)
            redis.call('HINCRBY', subject.w, 'r', subject.requestSlice)
          end
          if subject.tpm > 0 then
            redis.call('HINCRBY', subject.w, 't' .. second, subject.tokenSlice)
            redis.call('HINCRBY', subject.w, 't', subject.tokenSlice)
          end
          if subject.concurrency > 0 then
            redis.call('HSET', subject.slots, grant, subject.slotSlice .. ':' .. (nowMs + leaseMs))
            redis.call('PEXPIRE', subject.slots, 2 * leaseMs)
          end
        end
        if budget then
          redis.call('HINCRBY', budget, 'held', budgetSlice)
          redis.call('ZADD', holds, nowMs + leaseMs, grant .. ':' .. budgetSlice)
        end
      end
    end

    local requestsLimit, requestsLeft, tokensLimit, tokensLeft = 0, 0, 0, 0
    for _, subject in ipairs(subjects) do
      if subject.rpm > 0 then
        local left = subject.rpm - subject.requests - (admitted and 1 or 0)
        if requestsLimit == 0 or left < requestsLeft then requestsLimit, requestsLeft = subject.rpm, left end
      end
      if subject.tpm > 0 then
        local left = subject.tpm - subject.tokens - (admitted and tokens or 0)
        if tokensLimit == 0 or left < tokensLeft then tokensLimit, tokensLeft = subject.tpm, left end
      end
    end
    local n = #results
    results[n + 1], results[n + 2], results[n + 3] = code, which, wait
    results[n + 4], results[n + 5], results[n + 6], results[n + 7] = requestsLimit, requestsLeft, tokensLimit, tokensLeft
    results[n + 8], results[n + 9], results[n + 10], results[n + 11] = second, available, urgent, granted
  end
end
return results
`;

/**
 * KEYS concurrency lease sets, then budget hold sets. ARGV lease ms, the number of concurrency sets,
 * then the lease in each set. Extends leases still there (a lapsed one stays gone); drops the
 * lapsed leases of the concurrency sets (TURN only counts the live ones).
 */
const RENEW = `${CLOCK}
local leaseMs, leaseSets = tonumber(ARGV[1]), tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  if i <= leaseSets then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', nowMs)
    if redis.call('ZADD', key, 'XX', 'CH', nowMs + leaseMs, ARGV[i + 2]) == 1 then redis.call('PEXPIRE', key, 2 * leaseMs) end
  else
    redis.call('ZADD', key, 'XX', nowMs + leaseMs, ARGV[i + 2])
  end
end
return 1
`;

/** KEYS budget mirror. ARGV spent, expiry (epoch ms). Creates the mirror unless another call already did. */
const SEED_BUDGET = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spent', ARGV[1], 'held', '0')
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
`;

type Arg = string | number;

/** The scripts as typed commands (ioredis sends EVALSHA and falls back to EVAL). */
export type LimitRedis = RedisClient & LimitCommands;

interface LimitCommands {
  /** See TURN. */
  mgLimitTurn(owner: string, leaseMs: Arg, windowTtlMs: Arg, ...operations: string[]): Promise<number[]>;
  /** See RENEW. */
  mgLimitRenew(numberOfKeys: number, ...keysThenArgs: Arg[]): Promise<number>;
  mgLimitSeedBudget(budget: string, spent: string, expiresAtMs: number): Promise<number>;
}

const SCRIPTS = {
  mgLimitTurn: { numberOfKeys: 1, lua: TURN },
  mgLimitRenew: { lua: RENEW },
  mgLimitSeedBudget: { numberOfKeys: 1, lua: SEED_BUDGET },
} as const;

/** Registers the limit scripts on a connection (idempotent). */
export function withLimitScripts(redis: RedisClient): LimitRedis {
  const limited = redis as LimitRedis;
  if (typeof limited.mgLimitTurn !== 'function') {
    for (const [name, definition] of Object.entries(SCRIPTS)) redis.defineCommand(name, definition);
  }
  return limited;
}

/** Key names under the deployment prefix, tagged with the owner's id. */
export function limitKeys(prefix: string) {
  return {
    /** The prefix of every key of one owner (TURN's KEYS[1]). */
    owner: (userId: number) => `${prefix}lim:{u${userId}}`,
    /** Subjects and budgets are named by suffixes of their owner's prefix. */
    key: (tokenId: number) => `k${tokenId}`,
    /** The owner within one group (GroupRateLimit counts each user of a group on its own). */
    groupUser: (group: string) => `g:${group}`,
    /** The key's spend in the budget period starting at `startMs`. */
    budget: (tokenId: number, period: string, startMs: number) => `k${tokenId}:b:${period}:${startMs / 1000}`,
    /** The lease set of a subject or a budget (TURN keeps it; RENEW is handed it). */
    leases: (owner: string, name: string) => `${owner}:${name}:c`,
  };
}
export type LimitKeys = ReturnType<typeof limitKeys>;
