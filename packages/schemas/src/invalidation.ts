import { z } from 'zod';

/**
 * The account service publishes on this Redis channel (under the deployment prefix) whenever a
 * key, channel, option or user changes; relays drop the matching cache entries (docs/api.md 2.4: < 2 s).
 */
export const CACHE_INVALIDATION_CHANNEL = 'cache-invalidation';

export const cacheInvalidationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('channels') }),
  z.object({ kind: z.literal('options') }),
  z.object({ kind: z.literal('token'), tokenId: z.number().int(), keyHash: z.string().optional() }),
  z.object({ kind: z.literal('user'), userId: z.number().int() }),
]);
export type CacheInvalidation = z.infer<typeof cacheInvalidationSchema>;
