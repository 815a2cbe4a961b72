// Redis connections by use. No BullMQ here: the relay imports this module and must not load it.
import { Redis, type RedisOptions } from 'ioredis';

/**
 * Reconnection delay while Redis is away: quick at first, then once a second, so a service is back
 * within about a second of Redis's return (ioredis's default waits up to 2 s between attempts).
 */
export function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 100, 1_000);
}

/**
 * Options of a connection serving requests (sessions, rate limits, the relay's reservations): while
 * Redis is unreachable every command fails at once, so the caller answers 503 in milliseconds
 * instead of waiting for reconnection attempts (up to 6 s with ioredis's defaults).
 * - `enableOfflineQueue: false`: a command issued while disconnected is refused, not queued.
 * - `maxRetriesPerRequest: 0`: a command in flight when the connection drops fails, not resent later.
 * - `socketTimeout`: a server that stops answering (hung, partitioned) drops the connection after
 *   2 s, and with it every later command fails at once until it answers again.
 * - `connectTimeout`: an unanswered connection attempt is abandoned and retried after 2 s.
 * Commands fail too until the first connection is ready: see createServiceRedis.
 */
export const SERVICE_REDIS_OPTIONS = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  socketTimeout: 2_000,
  connectTimeout: 2_000,
  retryStrategy: reconnectDelay,
} as const satisfies RedisOptions;

/**
 * A request-serving connection (SERVICE_REDIS_OPTIONS), connecting in the background; until it is
 * ready its commands fail like during an outage. A service that needs Redis to start passes
 * `lazyConnect: true` and awaits `redis.connect()` (which rejects when Redis is unreachable).
 */
export function createServiceRedis(redisUrl: string, extra: RedisOptions = {}): Redis {
  return new Redis(redisUrl, { ...SERVICE_REDIS_OPTIONS, ...extra });
}

/**
 * Redis connection for a BullMQ producer (a Queue with `skipWaitingForReady`) on the HTTP path. A
 * queue sends its first command (INFO) when created and is broken for good if that one is refused,
 * so commands wait for the first connection; from then on they fail at once while Redis is away,
 * as on a request-serving connection (a queued add waited up to the 2 s deadline of its caller).
 */
export function createProducerConnection(redisUrl: string, extra: RedisOptions = {}): Redis {
  const redis = new Redis(redisUrl, { ...SERVICE_REDIS_OPTIONS, enableOfflineQueue: true, ...extra });
  // ioredis reads the option at every command.
  if (extra.enableOfflineQueue === undefined) redis.once('ready', () => (redis.options.enableOfflineQueue = false));
  return redis;
}

/** Redis connection for a BullMQ worker: BullMQ requires `maxRetriesPerRequest: null` for blocking calls. */
export function createWorkerConnection(redisUrl: string, extra: RedisOptions = {}): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null, ...extra });
}

/**
 * Shutdown: QUIT when connected (replies still due arrive first), else drop the reconnection loop,
 * and nothing once the client has ended: disconnect() on a client whose socket is already gone arms
 * a 2 s timer in ioredis that nothing clears, which keeps the process (or Jest) alive.
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit();
  else if (redis.status !== 'end') redis.disconnect();
}
