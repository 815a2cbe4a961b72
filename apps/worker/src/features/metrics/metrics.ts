import { createServiceMetrics, type ServiceMetrics, type ServiceMetricsOptions } from '@modelgate/http';
import type { Job, PaymentWebhookJob, Queue, Worker } from '@modelgate/queue';
import { Counter, Gauge } from 'prom-client';
import type { PaymentOutcome, PaymentResult } from '../payments/service';
import { REJECTION_REASONS } from '../payments/stripe-event';

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
/** A job's last attempt failed: its inbox row stays `failed` for an operator (or the sweeper) to retry. */
type ProcessedOutcome = PaymentOutcome | 'failed';
const PROCESSED_OUTCOMES: readonly ProcessedOutcome[] = ['credited', 'closed', 'ignored', 'rejected', 'already-done', 'failed'];

/** The worker's Prometheus series: HTTP (health and /metrics), queue depth, jobs and payment events. */
export interface WorkerMetrics {
  service: ServiceMetrics;
  /** Counts the jobs and events a payment worker finishes, from its `completed` and `failed` events. */
  observe(worker: Worker<PaymentWebhookJob>): void;
  /** Counts the jobs any other worker (such as `mail`) finishes, labelled with its queue. */
  observeJobs(worker: Worker): void;
}

/** BullMQ has counted the attempt by now; an unrecoverable error is never retried. */
function isFinalFailure(job: Job | undefined, err: Error): boolean {
  return !job || err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
}

/** `queue`: its depth by state is read from Redis at each scrape. */
export function createWorkerMetrics(queue: Queue<PaymentWebhookJob>, options: ServiceMetricsOptions = {}): WorkerMetrics {
  const service = createServiceMetrics('worker', options);
  const registers = [service.registry];
  const depth: Gauge<'queue' | 'state'> = new Gauge({
    name: 'worker_queue_jobs',
    help: 'Jobs in the queue by state (waiting, active, delayed, failed), read at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers,
    async collect() {
      try {
        const counts = await queue.getJobCounts(...QUEUE_STATES);
        for (const state of QUEUE_STATES) depth.labels(queue.name, state).set(counts[state] ?? 0);
      } catch {
        // Redis unreachable: no numbers rather than stale ones (the readiness probe reports the outage).
        depth.reset();
      }
    },
  });
  const completed = new Counter({
    name: 'worker_jobs_completed_total',
    help: 'Jobs processed successfully',
    labelNames: ['queue'] as const,
    registers,
  });
  const failed = new Counter({
    name: 'worker_jobs_failed_total',
    help: 'Failed job attempts; final="false" ones are retried with backoff, final="true" ones are given up',
    labelNames: ['queue', 'final'] as const,
    registers,
  });
  const processed = new Counter({
    name: 'worker_webhook_events_processed_total',
    help: 'Payment webhook events the worker finished with, by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    registers,
  });
  const rejected = new Counter({
    name: 'worker_payments_rejected_total',
    help: 'Payment events refused and left failed for an operator, by reason (amount_mismatch, currency_mismatch, ...); nothing was credited',
    labelNames: ['provider', 'reason'] as const,
    registers,
  });

  // Bound once, and exported at 0 from the first scrape.
  const completedJobs = completed.labels(queue.name);
  const failedAttempts = { retried: failed.labels(queue.name, 'false'), final: failed.labels(queue.name, 'true') };
  const processedEvents = new Map(PROCESSED_OUTCOMES.map((outcome) => [outcome, processed.labels('stripe', outcome)]));
  const rejectedEvents = new Map(REJECTION_REASONS.map((reason) => [reason, rejected.labels('stripe', reason)]));
  for (const child of [completedJobs, failedAttempts.retried, failedAttempts.final, ...processedEvents.values(), ...rejectedEvents.values()]) {
    child.inc(0);
  }

  return {
    service,
    observe(worker) {
      worker.on('completed', (_job: Job<PaymentWebhookJob>, result: PaymentResult | undefined) => {
        completedJobs.inc();
        if (result) processedEvents.get(result.outcome)?.inc();
        if (result?.rejection) rejectedEvents.get(result.rejection)?.inc();
      });
      worker.on('failed', (job: Job<PaymentWebhookJob> | undefined, err: Error) => {
        if (!isFinalFailure(job, err)) {
          failedAttempts.retried.inc();
          return;
        }
        failedAttempts.final.inc();
        processedEvents.get('failed')!.inc();
      });
    },
    observeJobs(worker) {
      const done = completed.labels(worker.name);
      const attempts = { retried: failed.labels(worker.name, 'false'), final: failed.labels(worker.name, 'true') };
      for (const child of [done, attempts.retried, attempts.final]) child.inc(0);
      worker.on('completed', () => done.inc());
      worker.on('failed', (job: Job | undefined, err: Error) => (isFinalFailure(job, err) ? attempts.final : attempts.retried).inc());
    },
  };
}
