import { describeError } from '@modelgate/http';
import { publishCacheInvalidation } from '@modelgate/queue';
import type { CacheInvalidation } from '@modelgate/schemas';
import type { AccountDeps } from '../deps';

/**
 * Publishes a cache invalidation after a committed change; a Redis failure is logged, not returned:
 * the change itself succeeded and the relays' periodic refresh picks it up.
 */
export async function publishInvalidation(deps: AccountDeps, message: CacheInvalidation): Promise<void> {
  try {
    await publishCacheInvalidation(deps.redis, deps.env.REDIS_PREFIX, message);
  } catch (err) {
    deps.logger.warn({ kind: message.kind, error: describeError(err) }, 'cache invalidation not published');
  }
}
