import { type ConnectionOptions, type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import { type Context, traceJobs } from '@modelgate/telemetry';
import { z } from 'zod';
import { bullPrefix } from './prefix';
import { jobTraceSchema, withJobTrace } from './trace';

/** Queue names and payloads are defined once here and shared by producers and workers. */
export const NOTIFICATION_QUEUE_NAMES = {
  mail: 'mail',
  balanceWarnings: 'balance-warnings',
} as const;

/**
 * One mail (docs/api.md 3.8), plain text. The worker reads the SMTP options when it sends, so a
 * mail queued while the server was down or unconfigured goes out once it is back.
 */
export const mailJobSchema = z.object({
  to: z.email(),
  subject: z.string().min(1).max(200),
  text: z.string().min(1).max(20_000),
  trace: jobTraceSchema,
});
export type MailJob = z.infer<typeof mailJobSchema>;

/**
 * A charge took the user's balance from at least the warning threshold to below it (docs/api.md
 * 3.8). Amounts are decimal text (quota is BIGINT). The worker reads the user's notification
 * settings when it runs, and sends a mail or a signed webhook.
 */
export const balanceWarningJobSchema = z.object({
  userId: z.number().int().positive(),
  before: z.string().regex(/^-?[0-9]+$/),
  after: z.string().regex(/^-?[0-9]+$/),
  /** Unix milliseconds of the charge that crossed the threshold. */
  crossedAt: z.number().int().nonnegative(),
  trace: jobTraceSchema,
});
export type BalanceWarningJob = z.infer<typeof balanceWarningJobSchema>;

/**
 * Mails carry single-use links and codes: a sent mail's job is removed at once, a failed one kept
 * a day for the operator. Retries span about 17 hours, through an SMTP outage of that length.
 */
export const MAIL_JOB_OPTIONS = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 30_000 },
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600 },
} as const;

/** A warning that cannot be delivered for about an hour is of no use any more. */
export const BALANCE_WARNING_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 15_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
} as const;

export function createMailQueue(connection: ConnectionOptions, redisPrefix: string): Queue<MailJob> {
  return new Queue<MailJob>(NOTIFICATION_QUEUE_NAMES.mail, {
    connection,
    prefix: bullPrefix(redisPrefix, connection),
    skipWaitingForReady: true,
    defaultJobOptions: MAIL_JOB_OPTIONS,
  });
}

/** Queues one mail, its span continuing `parent`'s trace. */
export async function enqueueMail(queue: Queue<MailJob>, mail: MailJob, parent?: Context): Promise<void> {
  await queue.add('mail', withJobTrace(mailJobSchema.parse(mail), parent));
}

export function createBalanceWarningQueue(connection: ConnectionOptions, redisPrefix: string): Queue<BalanceWarningJob> {
  return new Queue<BalanceWarningJob>(NOTIFICATION_QUEUE_NAMES.balanceWarnings, {
    connection,
    prefix: bullPrefix(redisPrefix, connection),
    skipWaitingForReady: true,
    defaultJobOptions: BALANCE_WARNING_JOB_OPTIONS,
  });
}

/**
 * The job id names the user and the crossing, so queueing the same crossing twice is a no-op. Its
 * span continues `parent`'s trace.
 */
export async function enqueueBalanceWarning(queue: Queue<BalanceWarningJob>, warning: BalanceWarningJob, parent?: Context): Promise<void> {
  const data = balanceWarningJobSchema.parse(warning);
  await queue.add('balance-warning', withJobTrace(data, parent), { jobId: `u${data.userId}-${data.crossedAt}` });
}

export function createMailWorker(
  connection: ConnectionOptions,
  redisPrefix: string,
  process: (job: Job<MailJob>, data: MailJob) => Promise<unknown>,
  options: Partial<WorkerOptions> = {},
): Worker<MailJob> {
  return new Worker<MailJob>(NOTIFICATION_QUEUE_NAMES.mail, traceJobs(NOTIFICATION_QUEUE_NAMES.mail, (job: Job<MailJob>) => process(job, mailJobSchema.parse(job.data))), {
    connection,
    prefix: bullPrefix(redisPrefix, connection),
    concurrency: 2,
    ...options,
  });
}

export function createBalanceWarningWorker(
  connection: ConnectionOptions,
  redisPrefix: string,
  process: (job: Job<BalanceWarningJob>, data: BalanceWarningJob) => Promise<unknown>,
  options: Partial<WorkerOptions> = {},
): Worker<BalanceWarningJob> {
  return new Worker<BalanceWarningJob>(
    NOTIFICATION_QUEUE_NAMES.balanceWarnings,
    traceJobs(NOTIFICATION_QUEUE_NAMES.balanceWarnings, (job: Job<BalanceWarningJob>) => process(job, balanceWarningJobSchema.parse(job.data))),
    { connection, prefix: bullPrefix(redisPrefix, connection), concurrency: 4, ...options },
  );
}
