// Redis for tests: the shared server, with every key of a run under its own prefix.
import { Redis, type RedisOptions } from 'ioredis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL || process.env.REDIS_URL || DEFAULT_REDIS_URL;
}

/** The key prefix of this test run (`mgtest:<random>:`), set by the Jest global setup. */
export function redisPrefix(): string {
  const prefix = process.env.REDIS_PREFIX;
  if (!prefix) throw new Error('REDIS_PREFIX is not set: run tests through the shared Jest preset');
  return prefix;
}

/** A client on the test server. Keys are not prefixed automatically: build them with redisPrefix(). */
export function createTestRedis(options: RedisOptions = {}): Redis {
  return new Redis(testRedisUrl(), { maxRetriesPerRequest: 1, ...options });
}

/** Deletes every key under `prefix` (SCAN + UNLINK, so a busy server is never blocked). Returns the count. */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<number> {
  if (!/^[A-Za-z0-9:_-]+$/.test(prefix)) throw new Error(`unexpected Redis prefix "${prefix}"`);
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

/**
 * Closes a client whatever its state: QUIT when connected, nothing once it has ended. disconnect()
 * on a client whose socket is already gone (ended, or reconnecting to a server that went away) arms
 * a 2 s timer in ioredis that nothing clears, which keeps Jest from exiting.
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit();
  else if (redis.status !== 'end') redis.disconnect();
}
