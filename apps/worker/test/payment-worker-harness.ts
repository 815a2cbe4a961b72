// The payment worker as the worker app runs it, on its own Redis connections and a queue under the
// test run's prefix; shared by the tests that deliver events through BullMQ.
import type { PrismaClient } from '@modelgate/db';
import { createLogger } from '@modelgate/logger';
import { createPaymentWebhookQueue, createProducerConnection, createWorkerConnection, type PaymentWebhookJob, type Queue, type Redis, type Worker } from '@modelgate/queue';
import { redisPrefix, testRedisUrl } from '@modelgate/testing';
import { startPaymentWorker } from '../src/features/payments/payment-worker';

export const testLogger = createLogger({ service: 'worker-test', level: 'silent' });

export interface PaymentWorkerHarness {
  queueConnection: Redis;
  workerConnection: Redis;
  queue: Queue<PaymentWebhookJob>;
  worker: Worker<PaymentWebhookJob>;
  close(): Promise<void>;
}

export async function startPaymentWorkerHarness(prisma: PrismaClient, concurrency: number): Promise<PaymentWorkerHarness> {
  const queueConnection = createProducerConnection(testRedisUrl());
  const workerConnection = createWorkerConnection(testRedisUrl());
  const queue = createPaymentWebhookQueue(queueConnection, redisPrefix());
  const worker = startPaymentWorker({
    prisma,
    logger: testLogger,
    connection: workerConnection,
    publisher: queueConnection,
    redisPrefix: redisPrefix(),
    concurrency,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
  });
  await worker.waitUntilReady();
  return {
    queueConnection,
    workerConnection,
    queue,
    worker,
    async close() {
      await worker.close();
      await queue.close();
      await workerConnection.quit();
      await queueConnection.quit();
    },
  };
}
