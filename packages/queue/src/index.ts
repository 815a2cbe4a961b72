import { type ConnectionOptions, type Job, Queue, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { STRIPE_PROVIDER } from '@modelgate/schemas';
import { type Context, traceJobs } from '@modelgate/telemetry';
import { z } from 'zod';
import { bullPrefix } from './prefix';
import { jobTraceSchema, withJobTrace } from './trace';

/** Queue names and payloads are defined once here and shared by producers and workers. */
export const QUEUE_NAMES = {
  paymentWebhooks: 'payment-webhooks',
} as const;

/**
 * A provider event id usable as a BullMQ job id: BullMQ rejects ids containing ':' and ids that
 * read as integers. Stripe's ids (`evt_...`) always qualify.
 */
export const PROVIDER_EVENT_ID = /^[A-Za-z][A-Za-z0-9_-]{0,254}$/;

export const paymentWebhookJobSchema = z.object({
  provider: z.literal(STRIPE_PROVIDER),
  /** The provider's event id; also the BullMQ job id, so a duplicate add is a no-op. */
  eventId: z.string().regex(PROVIDER_EVENT_ID, 'not a provider event id'),
  trace: jobTraceSchema,
});
export type PaymentWebhookJob = z.infer<typeof paymentWebhookJobSchema>;


export const PAYMENT_WEBHOOK_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
  removeOnFail: { age: 30 * 24 * 3600, count: 10_000 },
} as const;

export function createPaymentWebhookQueue(connection: ConnectionOptions, redisPrefix: string): Queue<PaymentWebhookJob> {
  return new Queue<PaymentWebhookJob>(QUEUE_NAMES.paymentWebhooks, {
    connection,
    prefix: bullPrefix(redisPrefix, connection),
    skipWaitingForReady: true,
    defaultJobOptions: PAYMENT_WEBHOOK_JOB_OPTIONS,
  });
}

/**
 * Queues one payment event, its span continuing `parent`'s trace; the job id is the event id, so
 * re-queueing the same event is a no-op.
 */
export async function enqueuePaymentWebhook(queue: Queue<PaymentWebhookJob>, job: PaymentWebhookJob, parent?: Context): Promise<void> {
  const data = paymentWebhookJobSchema.parse(job);
  await queue.add(`${data.provider}:${data.eventId}`, withJobTrace(data, parent), { jobId: data.eventId });
}

export type RequeueOutcome = 'queued' | 'requeued' | 'already-queued';

/**
 * Queues an event again even when a finished job with its id is still retained (completed, or
 * failed after its last attempt), which a plain add would silently ignore. A job that is waiting,
 * delayed or running is left alone: it will be processed anyway. Used by the inbox sweeper and the
 * operator's replay.
 */
export async function requeuePaymentWebhook(queue: Queue<PaymentWebhookJob>, job: PaymentWebhookJob): Promise<RequeueOutcome> {
  const data = paymentWebhookJobSchema.parse(job);
  const existing = await queue.getJob(data.eventId);
  if (existing) {
    const state = await existing.getState();
    if (state === 'completed' || state === 'failed') {
      try {
        await existing.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
        return 'requeued';
      } catch {
        // Its state changed under us (removed by retention, or retried by someone else): add below.
      }
    } else if (state !== 'unknown') {
      return 'already-queued';
    }
  }
  await enqueuePaymentWebhook(queue, data);
  return 'queued';
}

export function createPaymentWebhookWorker(
  connection: ConnectionOptions,
  redisPrefix: string,
  process: (job: Job<PaymentWebhookJob>, data: PaymentWebhookJob) => Promise<unknown>,
  options: Partial<WorkerOptions> = {},
): Worker<PaymentWebhookJob> {
  return new Worker<PaymentWebhookJob>(
    QUEUE_NAMES.paymentWebhooks,
    traceJobs(QUEUE_NAMES.paymentWebhooks, (job: Job<PaymentWebhookJob>) => process(job, paymentWebhookJobSchema.parse(job.data))),
    { connection, prefix: bullPrefix(redisPrefix, connection), concurrency: 4, ...options },
  );
}

export { Queue, Worker, Redis, UnrecoverableError };
export type { Job };

export { invalidationChannel, publishCacheInvalidation } from './invalidation';
export * from './connections';
export * from './notifications';
export * from './maintenance';
export { bullPrefix } from './prefix';
