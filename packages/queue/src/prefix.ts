import type { ConnectionOptions } from 'bullmq';

/**
 * Keys live under the deployment's Redis prefix, so tests and co-hosted installs never collide. On a
 * Cluster the rest of the prefix is a hash tag: BullMQ's scripts touch several keys of a queue at
 * once, which a Cluster allows only within one slot. Elsewhere the names stay as they were, so an
 * upgrade finds the jobs already queued.
 */
export function bullPrefix(redisPrefix: string, connection: ConnectionOptions): string {
  return 'isCluster' in connection && connection.isCluster ? `${redisPrefix}{bull}` : `${redisPrefix}bull`;
}
