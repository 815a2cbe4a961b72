import type { PrismaClient } from '@modelgate/db';
import { describeError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import { createMailWorker, type MailJob, type RedisClient, UnrecoverableError, type Worker } from '@modelgate/queue';
import { readOptions } from '@modelgate/schemas';
import { Mailer, smtpSettingsOf } from './smtp';

export interface MailWorkerOptions {
  prisma: PrismaClient;
  logger: Logger;
  /** A connection made with `createWorkerConnection`, for this worker alone. */
  connection: RedisClient;
  redisPrefix: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
}

/** No SMTPServer yet: the job fails and is retried, so mail queued before the operator set one up still goes out. */
export class SmtpNotConfiguredError extends Error {
  override name = 'SmtpNotConfiguredError';
}

/** The server refused the recipient for good (5xx at RCPT TO): retrying would only be refused again. */
function isRecipientRefused(err: unknown): boolean {
  const { code, command, responseCode } = err as { code?: unknown; command?: unknown; responseCode?: unknown };
  return code === 'EENVELOPE' && command === 'RCPT TO' && typeof responseCode === 'number' && responseCode >= 500;
}

/**
 * Consumes the `mail` queue (docs/api.md 3.9.1): each job is one plain-text mail, sent with the SMTP
 * options as they are when it runs. Failures are retried with the queue's backoff. Mails carry reset
 * links and codes: nothing of a mail but its job id and subject is ever logged, and never the password.
 */
export function startMailWorker(options: MailWorkerOptions): Worker<MailJob> {
  const { prisma, logger } = options;
  const mailer = new Mailer();
  // Said once, not at every attempt of every waiting mail; said again if SMTPServer is emptied later.
  let warnedUnconfigured = false;
  const worker = createMailWorker(
    options.connection,
    options.redisPrefix,
    async (job, mail) => {
      const settings = smtpSettingsOf(await readOptions(prisma));
      if (!settings) {
        if (!warnedUnconfigured) {
          logger.warn('mail is queued but SMTPServer is not set: it is retried until root sets the Mail options');
          warnedUnconfigured = true;
        }
        throw new SmtpNotConfiguredError('SMTPServer is not set');
      }
      warnedUnconfigured = false;
      const attempt = job.attemptsMade + 1;
      try {
        await mailer.send(settings, mail);
      } catch (err) {
        const refused = isRecipientRefused(err);
        const final = refused || attempt >= (job.opts.attempts ?? 1);
        logger.warn({ jobId: job.id, subject: mail.subject, attempt, final, error: describeError(err) }, 'mail not sent');
        if (refused) throw new UnrecoverableError('the mail server refused the recipient');
        throw err;
      }
      logger.info({ jobId: job.id, subject: mail.subject, attempt }, 'mail sent');
    },
    { lockDuration: options.lockDurationMs, stalledInterval: options.stalledIntervalMs },
  );
  worker.on('error', (err) => logger.warn({ error: describeError(err) }, 'mail worker error'));
  worker.on('closed', () => mailer.close());
  return worker;
}
