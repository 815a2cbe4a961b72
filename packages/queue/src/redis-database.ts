// Boot check of the Redis database index, apart from the BullMQ queues so the relay can use it
// without loading BullMQ.
import { Cluster, ReplyError } from 'ioredis';
import type { RedisClient } from './connections';

/** How long boot waits for the first connection before saying it could not check. */
const FIRST_CONNECTION_TIMEOUT_MS = 10_000;

/**
 * Resolves once the connection is ready. Request-serving connections refuse commands until then
 * (no offline queue, see createServiceRedis), so the check must not be sent earlier.
 */
function firstConnection(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady).off('end', onEnd);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => settle();
    // ioredis gave up reconnecting (its retryStrategy said stop).
    const onEnd = () => settle(new Error('connection closed'));
    const timer = setTimeout(() => settle(new Error(`no connection within ${FIRST_CONNECTION_TIMEOUT_MS / 1000} s`)), FIRST_CONNECTION_TIMEOUT_MS);
    redis.once('ready', onReady).once('end', onEnd);
  });
}

/**
 * Makes sure the server has the database REDIS_URL selects. ioredis sends `SELECT <n>` on connect,
 * but when the server refuses the index it only emits an error event and carries on in database 0,
 * where the service would silently read and write. Relay, account and worker call it once at boot.
 */
export async function assertRedisDatabase(redis: RedisClient): Promise<void> {
  // A Cluster has database 0 only (the environment checks REDIS_URL selects no other).
  if (redis instanceof Cluster) return;
  const { db = 0, host, port } = redis.options;
  // Every server has database 0.
  if (db === 0) return;
  try {
    await firstConnection(redis);
    await redis.select(db);
  } catch (err) {
    const { message } = err as Error;
    // ioredis types ReplyError (the server's answer) as any.
    if (!(err instanceof ReplyError)) {
      throw new Error(`could not check that the Redis server at ${host}:${port} has database ${db} (REDIS_URL): ${message}`, { cause: err });
    }
    throw new Error(
      `REDIS_URL selects database ${db}, which the Redis server at ${host}:${port} refuses (${message}): ` +
        "use an index below the server's `databases` setting (16 by default)",
      { cause: err },
    );
  }
}
