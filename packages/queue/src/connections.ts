// Redis connections by use. No BullMQ here: the relay imports this module and must not load it.
import type { RedisTarget } from '@modelgate/config';
import type { EventEmitter } from 'node:events';
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';

/** A connection to any topology: one server or a Sentinel-watched master (Redis), or a Cluster. */
export type RedisClient = Redis | Cluster;

/** Where to connect: a topology from the environment (redisTargetOf), or one server's URL. */
export type RedisAddress = RedisTarget | string;

/** One server's URL always gives a plain Redis connection (what tests and tools use). */
export type ClientOf<A extends RedisAddress> = A extends string ? Redis : RedisClient;

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
export function createServiceRedis<A extends RedisAddress>(address: A, extra: RedisOptions = {}): ClientOf<A> {
  return createRedisClient(address, { ...SERVICE_REDIS_OPTIONS, ...extra });
}

/**
 * The one place a connection is made, for each topology, with the options of its use:
 * - one server: the URL as it is.
 * - Sentinel: the URL's password and database; the master's address comes from the sentinels, again
 *   after each reconnection. A master demoted while still up refuses writes (READONLY): that
 *   command fails and the client reconnects, to the new master. (ioredis's `failoverDetector` would
 *   notice sooner, but its connections to the sentinels outlive `quit()`.)
 * - Cluster: the URL's user, password and TLS for every node. The options that concern the whole
 *   client (offline queue, lazy connection, auto-pipelining, reconnection) are the Cluster's own;
 *   the others apply to each node's connection.
 */
export function createRedisClient<A extends RedisAddress>(address: A, options: RedisOptions = {}): ClientOf<A> {
  return clientFor(typeof address === 'string' ? { kind: 'single', url: address } : address, options) as ClientOf<A>;
}

function clientFor(target: RedisTarget, options: RedisOptions): RedisClient {
  switch (target.kind) {
    case 'single':
      return new Redis(target.url, options);
    case 'sentinel':
      return new Redis(target.url, { ...options, sentinels: target.sentinels, name: target.name, reconnectOnError: isReadOnlyError });
    case 'cluster':
      return new Cluster(target.nodes, clusterOptions(options, nodeCredentials(target.url)));
  }
}

const isReadOnlyError = (err: Error) => err.message.startsWith('READONLY');

/** The user, password and TLS of a URL, for a Cluster's nodes (its host and database are not used). */
function nodeCredentials(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username && { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password && { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' && { tls: {} }),
  };
}

function clusterOptions(options: RedisOptions, nodeOptions: ClusterOptions['redisOptions'] = {}): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, lazyConnect, enableAutoPipelining, ...perNode } = options;
  return {
    ...(retryStrategy !== undefined && { clusterRetryStrategy: retryStrategy }),
    ...(enableOfflineQueue !== undefined && { enableOfflineQueue }),
    ...(lazyConnect !== undefined && { lazyConnect }),
    ...(enableAutoPipelining !== undefined && { enableAutoPipelining }),
    // A Cluster resends a command whose node connection dropped, though it may have run: a
    // reservation would then hold twice. Not when the caller wants no resending (service connections).
    ...(perNode.maxRetriesPerRequest === 0 && { retryDelayOnFailover: 0 }),
    redisOptions: { ...nodeOptions, ...perNode },
  };
}

/** A new connection like `redis` (same topology and credentials), with some options changed: e.g. for a subscription. */
export function duplicateRedis(redis: RedisClient, options: RedisOptions): RedisClient {
  if (redis instanceof Cluster) return redis.duplicate(undefined, clusterOptions(options, redis.options.redisOptions));
  return redis.duplicate(options);
}

/** Listens for the client's errors; returns it (TypeScript cannot call `on` on the union of both kinds of client). */
export function withErrorListener<C extends RedisClient>(redis: C, listener: (err: Error) => void): C {
  (redis as EventEmitter).on('error', listener);
  return redis;
}

/** The connection's socket while it has one (a Cluster has one per node, none to cork as a whole). */
export function socketOf(redis: RedisClient): Redis['stream'] | undefined {
  return redis instanceof Cluster ? undefined : redis.stream;
}

/**
 * Redis connection for a BullMQ producer (a Queue with `skipWaitingForReady`) on the HTTP path. A
 * queue sends its first command (INFO) when created and is broken for good if that one is refused,
 * so commands wait for the first connection; from then on they fail at once while Redis is away,
 * as on a request-serving connection (a queued add waited up to the 2 s deadline of its caller).
 */
export function createProducerConnection<A extends RedisAddress>(address: A, extra: RedisOptions = {}): ClientOf<A> {
  const redis = createRedisClient(address, { ...SERVICE_REDIS_OPTIONS, enableOfflineQueue: true, ...extra });
  const client: RedisClient = redis;
  // ioredis reads the option at every command. (Both kinds of client are EventEmitters.)
  if (extra.enableOfflineQueue === undefined) (client as EventEmitter).once('ready', () => (client.options.enableOfflineQueue = false));
  return redis;
}

/** Redis connection for a BullMQ worker: BullMQ requires `maxRetriesPerRequest: null` for blocking calls. */
export function createWorkerConnection<A extends RedisAddress>(address: A, extra: RedisOptions = {}): ClientOf<A> {
  return createRedisClient(address, { maxRetriesPerRequest: null, ...extra });
}

/**
 * Shutdown: QUIT when connected (replies still due arrive first), else drop the reconnection loop,
 * and nothing once the client has ended: disconnect() on a client whose socket is already gone arms
 * a 2 s timer in ioredis that nothing clears, which keeps the process (or Jest) alive.
 */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') await redis.quit();
  else if (redis.status !== 'end') redis.disconnect();
}
