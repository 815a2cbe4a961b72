// Cache invalidations over Redis pub/sub, apart from the BullMQ queues: the relay needs only these,
// and loading BullMQ would cost it memory for nothing.
import type { RedisClient } from './connections';
import { CACHE_INVALIDATION_CHANNEL, type CacheInvalidation, cacheInvalidationSchema } from '@modelgate/schemas';

/** The Redis pub/sub channel relays listen on for cache invalidations, under the deployment prefix. */
export function invalidationChannel(redisPrefix: string): string {
  return `${redisPrefix}${CACHE_INVALIDATION_CHANNEL}`;
}

/**
 * Tells every relay to drop what it cached about a changed row (docs/api.md 2.4: within 2 s). Publish
 * only after the change committed.
 */
export async function publishCacheInvalidation(redis: RedisClient, redisPrefix: string, message: CacheInvalidation): Promise<void> {
  await redis.publish(invalidationChannel(redisPrefix), JSON.stringify(cacheInvalidationSchema.parse(message)));
}
