import { describeError, withTimeout } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import type * as QueueModule from '@modelgate/queue';
import { closeRedis, createProducerConnection, type RedisAddress, type RedisClient, withErrorListener } from '@modelgate/queue/connections';
import type { BalanceWarning } from './ledger-entry';

/** A job not queued by then is dropped (and logged): a warning is not worth holding a shutdown for. */
const ENQUEUE_TIMEOUT_MS = 5_000;

interface Producer {
  module: typeof QueueModule;
  connection: RedisClient;
  queue: QueueModule.Queue<QueueModule.BalanceWarningJob>;
}

/**
 * Queues one balance-warning job per threshold crossing the ledger writer reports (docs/api.md
 * 3.9.6); the worker sends the mail or webhook. Best effort and never awaited by the ledger: a job
 * that cannot be queued is logged and dropped, the charge stays booked. BullMQ and its connection
 * are loaded at the first crossing, so a relay whose users set no warning does not carry them.
 */
export class BalanceWarningQueue {
  private producer: Producer | undefined;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly redisAddress: RedisAddress,
    private readonly redisPrefix: string,
    private readonly logger: Logger,
  ) {}

  enqueue(crossings: BalanceWarning[]): void {
    for (const crossing of crossings) {
      const sent: Promise<void> = this.send(crossing).finally(() => this.pending.delete(sent));
      this.pending.add(sent);
    }
  }

  private open(): Producer {
    if (this.producer) return this.producer;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const module = require('@modelgate/queue') as typeof QueueModule;
    const onError = (err: Error) => this.logger.warn({ err: describeError(err) }, 'redis error (balance-warning queue)');
    const connection = withErrorListener(createProducerConnection(this.redisAddress), onError);
    const queue = module.createBalanceWarningQueue(connection, this.redisPrefix);
    queue.on('error', onError);
    this.producer = { module, connection, queue };
    return this.producer;
  }

  private async send({ userId, before, after, crossedAt, trace }: BalanceWarning): Promise<void> {
    try {
      const { module, queue } = this.open();
      // The crossing charge's trace context (when traced), which the worker's span continues.
      const warning = { userId, before: before.toString(), after: after.toString(), crossedAt, ...(trace && { trace }) };
      await withTimeout(module.enqueueBalanceWarning(queue, warning), ENQUEUE_TIMEOUT_MS, 'queueing the warning');
    } catch (err) {
      this.logger.warn({ userId, crossedAt, err: describeError(err) }, 'balance warning not queued; dropped (the charge is booked)');
    }
  }

  /** Waits for the jobs being queued (each settles within ENQUEUE_TIMEOUT_MS), then closes the queue. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    const producer = this.producer;
    this.producer = undefined;
    if (!producer) return;
    await producer.queue.close();
    await closeRedis(producer.connection);
  }
}
