import { describeError } from '@modelgate/http';
import type { EventEmitter } from 'node:events';
import type { Logger } from '@modelgate/logger';
import { duplicateRedis, type RedisClient } from '@modelgate/queue/connections';
import { invalidationChannel } from '@modelgate/queue/invalidation';
import { type CacheInvalidation, cacheInvalidationSchema } from '@modelgate/schemas';
import type { LedgerWriter } from '../billing/ledger-writer';
import type { ChannelCache } from '../channels/channel-cache';
import type { KeyCache } from '../keys/key-cache';
import type { OptionsCache } from '../options/options-cache';

export interface CacheSyncDeps {
  keys: KeyCache;
  channels: ChannelCache;
  options: OptionsCache;
  ledger: LedgerWriter;
  logger: Logger;
}

/**
 * Keeps the in-memory caches and the balance mirrors in step with the account service: applies its
 * invalidation messages as they come, and re-reads everything periodically (and after a lost
 * subscription) in case a message was missed.
 */
export class CacheSync {
  private timer: NodeJS.Timeout | undefined;
  private subscriber: RedisClient | undefined;

  constructor(private readonly deps: CacheSyncDeps) {}

  /** Loads channels and options, subscribes, and starts the periodic refresh. */
  async start(redis: RedisClient, redisPrefix: string, refreshIntervalMs: number): Promise<void> {
    await Promise.all([this.deps.channels.reload(), this.deps.options.reload()]);
    // Unlike the command connection, the subscription waits for Redis (and is renewed after an outage).
    const subscriber = duplicateRedis(redis, { maxRetriesPerRequest: null, enableOfflineQueue: true, lazyConnect: false });
    this.subscriber = subscriber;
    // Both kinds of client are EventEmitters (TypeScript cannot call `on` on their union).
    const events: EventEmitter = subscriber;
    events.on('error', (err) => this.deps.logger.warn({ err: describeError(err) }, 'invalidation subscriber error'));
    let subscribedOnce = false;
    events.on('ready', () => {
      // Messages published while we were disconnected are lost: catch up by re-reading everything.
      if (subscribedOnce) void this.refreshAll();
      subscribedOnce = true;
    });
    events.on('message', (_channel: string, text: string) => void this.onMessage(text));
    await subscriber.subscribe(invalidationChannel(redisPrefix));
    this.timer = setInterval(() => void this.refreshAll(), refreshIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = undefined;
    }
  }

  private async onMessage(text: string): Promise<void> {
    let message: CacheInvalidation;
    try {
      message = cacheInvalidationSchema.parse(JSON.parse(text));
    } catch {
      this.deps.logger.warn('ignored a malformed cache invalidation message');
      return;
    }
    try {
      await this.apply(message);
    } catch (err) {
      this.deps.logger.error({ kind: message.kind, err: describeError(err) }, 'could not apply a cache invalidation');
    }
  }

  /** Applies one invalidation (also callable directly, e.g. by tests or an admin hook). */
  async apply(message: CacheInvalidation): Promise<void> {
    switch (message.kind) {
      case 'channels':
        await this.deps.channels.reload();
        return;
      case 'options':
        await this.deps.options.reload();
        return;
      case 'token':
        this.deps.keys.invalidateToken(message.tokenId, message.keyHash);
        await this.deps.ledger.reloadBalances([], [message.tokenId]);
        return;
      case 'user':
        await this.deps.keys.invalidateUser(message.userId);
        await this.deps.ledger.reloadBalances([message.userId], []);
        return;
    }
  }

  /** The safety net: every cache and every mirror this instance uses, re-read. */
  async refreshAll(): Promise<void> {
    try {
      await Promise.all([this.deps.channels.reload(), this.deps.options.reload(), this.deps.keys.refreshAll()]);
      await this.deps.ledger.reloadBalances(this.deps.keys.cachedUserIds(), this.deps.keys.limitedTokenIds());
    } catch (err) {
      this.deps.logger.error({ err: describeError(err) }, 'periodic cache refresh failed');
    }
  }
}
