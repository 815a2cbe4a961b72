import type { PrismaClient } from '@modelgate/db';
import { isDependencyUnavailable } from '@modelgate/errors';
import { describeError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import { createPaymentWebhookWorker, type PaymentWebhookJob, publishCacheInvalidation, type RedisClient, UnrecoverableError, type Worker } from '@modelgate/queue';
import { recordAttemptFailure } from './repository';
import { PaymentEventMissingError, processStripeEvent } from './service';

export interface PaymentWorkerOptions {
  prisma: PrismaClient;
  logger: Logger;
  /** A connection made with `createWorkerConnection` (BullMQ needs `maxRetriesPerRequest: null`). */
  connection: RedisClient;
  /** Publishes the cache invalidation that makes relays see a credited balance at once. */
  publisher: RedisClient;
  redisPrefix: string;
  concurrency: number;
  /** How long a job stays locked without renewal: a killed worker's job is re-run after about this. */
  lockDurationMs: number;
  stalledIntervalMs: number;
}

/** The inbox's `last_error`: the error's kind and code, then its one-line summary; never a stack or query. */
function lastErrorText(err: unknown): string {
  const { type, code, message } = describeError(err) as { type: string; code?: string | number; message?: string };
  return `${type}${code === undefined ? '' : ` (${code})`}: ${message ?? 'unknown error'}`.slice(0, 500);
}

/** Consumes `payment-webhooks`: one job per Stripe event id, retried with backoff on transient errors. */
export function startPaymentWorker(options: PaymentWorkerOptions): Worker<PaymentWebhookJob> {
  const { prisma, logger } = options;
  const worker = createPaymentWebhookWorker(
    options.connection,
    options.redisPrefix,
    async (job, data) => {
      try {
        const result = await processStripeEvent(prisma, data.eventId);
        if (result.creditedUserId !== undefined) {
          await publishCacheInvalidation(options.publisher, options.redisPrefix, { kind: 'user', userId: result.creditedUserId })
            .catch((err) => logger.warn({ error: describeError(err) }, 'cache invalidation not published; relays refresh periodically'));
        }
        const level = result.outcome === 'rejected' ? 'warn' : 'info';
        logger[level]({ eventId: data.eventId, outcome: result.outcome, rejection: result.rejection, note: result.note }, 'payment event processed');
        return result;
      } catch (err) {
        if (err instanceof PaymentEventMissingError) throw new UnrecoverableError(err.message);
        const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        // PostgreSQL or Redis down says nothing about the event: even after the last attempt it stays
        // `received`, and the sweeper queues it again once the outage is over.
        const final = lastAttempt && !isDependencyUnavailable(err);
        logger.warn({ eventId: data.eventId, attempt: job.attemptsMade + 1, final, error: describeError(err) }, 'payment event attempt failed');
        // Best effort: when the database itself is still down this fails too, and the row stays
        // `received` all the same.
        await recordAttemptFailure(prisma, data.eventId, lastErrorText(err), final).catch(() => undefined);
        throw err;
      }
    },
    {
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
    },
  );
  worker.on('error', (err) => logger.warn({ error: describeError(err) }, 'payment worker error'));
  return worker;
}
