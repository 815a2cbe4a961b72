import type { PrismaClient } from '@modelgate/db';
import { describeError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import { type PaymentWebhookJob, type Queue, requeuePaymentWebhook } from '@modelgate/queue';
import { STRIPE_PROVIDER } from '@modelgate/schemas';
import { findStaleReceivedEvents } from './repository';

export interface InboxSweeperOptions {
  prisma: PrismaClient;
  queue: Queue<PaymentWebhookJob>;
  logger: Logger;
  intervalMs: number;
  /** Only rows older than this are re-queued: younger ones are normally still on their way. */
  minAgeMs: number;
  batchSize?: number;
}

export interface InboxSweeper {
  /** One pass; returns how many events were (re)queued. */
  sweepOnce(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Re-queues inbox rows left `received`: events stored while Redis was down, or whose job was lost
 * or gave up while the database was unreachable. Queuing is idempotent, so overlap with a live job
 * or another worker's sweeper is harmless.
 */
export function startInboxSweeper(options: InboxSweeperOptions): InboxSweeper {
  const { prisma, queue, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;

  async function sweepOnce(): Promise<number> {
    const before = new Date(Date.now() - options.minAgeMs);
    const eventIds = await findStaleReceivedEvents(prisma, before, options.batchSize ?? 500);
    let queued = 0;
    for (const eventId of eventIds) {
      const outcome = await requeuePaymentWebhook(queue, { provider: STRIPE_PROVIDER, eventId });
      if (outcome !== 'already-queued') queued += 1;
    }
    if (queued > 0) logger.info({ queued }, 'inbox sweeper re-queued payment events');
    return queued;
  }

  const tick = () => {
    running = sweepOnce()
      .catch((err) => logger.warn({ error: describeError(err) }, 'inbox sweep failed; retrying next interval'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs);
      });
  };
  tick();

  return {
    sweepOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
