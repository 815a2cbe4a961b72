import { SecretDecryptionError } from '@modelgate/db';
import { describeError, WebhookAddressError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import { type BalanceWarningJob, createBalanceWarningWorker, type RedisClient, UnrecoverableError, type Worker } from '@modelgate/queue';
import { type BalanceWarningDeps, sendBalanceWarning } from './service';

export interface BalanceWarningWorkerOptions extends BalanceWarningDeps {
  logger: Logger;
  /** A connection made with `createWorkerConnection`, for this worker alone. */
  connection: RedisClient;
  redisPrefix: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
}

/**
 * Failures no retry can mend: an address the rules refuse (the same at every attempt until the
 * user changes it) or a secret sealed under another CRYPTO_SECRET. The network's errors may be
 * wrapped by the HTTP client: the whole chain is looked at.
 */
function isPermanent(err: unknown): boolean {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof WebhookAddressError || cause instanceof SecretDecryptionError) return true;
  }
  return false;
}

/**
 * Consumes `balance-warnings` (docs/api.md 3.9.6): a mail queued, or a signed webhook POSTed. A
 * webhook that fails (down, timeout, non-2xx) is retried with the queue's backoff. Nothing of a
 * user's URL or secret is logged.
 */
export function startBalanceWarningWorker(options: BalanceWarningWorkerOptions): Worker<BalanceWarningJob> {
  const { logger } = options;
  const worker = createBalanceWarningWorker(
    options.connection,
    options.redisPrefix,
    async (job, warning) => {
      try {
        const outcome = await sendBalanceWarning(options, warning);
        logger.info({ jobId: job.id, userId: warning.userId, outcome }, 'balance warning processed');
        return outcome;
      } catch (err) {
        const permanent = isPermanent(err);
        const attempt = job.attemptsMade + 1;
        const final = permanent || attempt >= (job.opts.attempts ?? 1);
        logger.warn({ jobId: job.id, userId: warning.userId, attempt, final, error: describeError(err) }, 'balance warning not delivered');
        if (permanent) throw new UnrecoverableError(err instanceof Error ? err.message : 'not deliverable');
        throw err;
      }
    },
    { lockDuration: options.lockDurationMs, stalledInterval: options.stalledIntervalMs },
  );
  worker.on('error', (err) => logger.warn({ error: describeError(err) }, 'balance-warning worker error'));
  return worker;
}
