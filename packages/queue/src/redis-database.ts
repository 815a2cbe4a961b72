// Boot check of the Redis database index, apart from the BullMQ queues so the relay can use it
// without loading BullMQ.
import { type Redis, ReplyError } from 'ioredis';

/**
 * Makes sure the server has the database REDIS_URL selects. ioredis sends `SELECT <n>` on connect,
 * but when the server refuses the index it only emits an error event and carries on in database 0,
 * where the service would silently read and write. Relay, account and worker call it once at boot.
 */
export async function assertRedisDatabase(redis: Redis): Promise<void> {
  const { db = 0, host, port } = redis.options;
  // Every server has database 0.
  if (db === 0) return;
  try {
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
