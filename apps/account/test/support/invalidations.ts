import { CACHE_INVALIDATION_CHANNEL, type CacheInvalidation } from '@modelgate/schemas';
import { createTestRedis, redisPrefix } from '@modelgate/testing';

export interface InvalidationListener {
  /** The next message not yet taken, waiting for it up to `timeoutMs` (the relay's 2 s budget). */
  next(timeoutMs?: number): Promise<CacheInvalidation>;
  close(): Promise<void>;
}

/** Subscribes like a relay does and queues the cache invalidation messages. */
export async function listenForInvalidations(): Promise<InvalidationListener> {
  const subscriber = createTestRedis();
  const unread: CacheInvalidation[] = [];
  let waiter: ((message: CacheInvalidation) => void) | undefined;
  subscriber.on('message', (_channel: string, text: string) => {
    const message = JSON.parse(text) as CacheInvalidation;
    if (waiter) {
      const deliver = waiter;
      waiter = undefined;
      deliver(message);
    } else {
      unread.push(message);
    }
  });
  await subscriber.subscribe(`${redisPrefix()}${CACHE_INVALIDATION_CHANNEL}`);
  return {
    next(timeoutMs = 2000) {
      const queued = unread.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = undefined;
          reject(new Error(`no invalidation within ${timeoutMs} ms`));
        }, timeoutMs);
        waiter = (message) => {
          clearTimeout(timer);
          resolve(message);
        };
      });
    },
    close: async () => {
      await subscriber.quit();
    },
  };
}
