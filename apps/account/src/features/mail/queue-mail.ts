import { AppError } from '@modelgate/errors';
import { withTimeout } from '@modelgate/http';
import { enqueueMail, type MailJob } from '@modelgate/queue';
import { activeTraceContext } from '@modelgate/telemetry';
import type { AccountDeps } from '../../deps';
import { QUEUE_TIMEOUT_MS } from '../payments/service';

function queueUnavailable(err: unknown): AppError {
  return new AppError('service_unavailable', 'mail cannot be sent right now; try again later', { cause: err });
}

/**
 * Hands a mail to the worker (docs/api.md 3.9.1), which sends it and retries through SMTP outages.
 * Only the queue itself being unreachable fails the request: 503, so the caller may ask again.
 */
export async function queueMail(deps: AccountDeps, mail: MailJob): Promise<void> {
  try {
    // Deep in a request's services: the request's context is the active one (traceRequests).
    await withTimeout(enqueueMail(deps.mailQueue, mail, activeTraceContext()), QUEUE_TIMEOUT_MS, 'mail queue');
  } catch (err) {
    throw queueUnavailable(err);
  }
}

/**
 * 503 unless the mail queue answers: asked before anything depends on who the caller names, an
 * answer that must not tell whether an account exists fails alike for everyone.
 */
export async function ensureMailQueueReachable(deps: AccountDeps): Promise<void> {
  try {
    // One cheap read (HEXISTS) through the queue's own connection.
    await withTimeout(deps.mailQueue.isPaused(), QUEUE_TIMEOUT_MS, 'mail queue');
  } catch (err) {
    throw queueUnavailable(err);
  }
}
