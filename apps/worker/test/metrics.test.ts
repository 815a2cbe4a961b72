// The worker's /metrics after some traffic: queue depth by state, jobs completed and
// failed, payment webhook events processed by outcome, payments rejected by reason, and its own
// HTTP requests.
import type { PrismaClient } from '@modelgate/db';
import { metricValue } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import {
  createPaymentWebhookQueue,
  createProducerConnection,
  createWorkerConnection,
  enqueuePaymentWebhook,
  type PaymentWebhookJob,
  type Queue,
  type Redis,
  type Worker,
} from '@modelgate/queue';
import { createTestPrisma, createTestRedis, createUser, redisPrefix, setOption, testRedisUrl } from '@modelgate/testing';
import { checkoutEvent } from '@modelgate/testing/fake-stripe';
import { waitFor } from '@modelgate/testing/processes';
import request from 'supertest';
import { createWorkerApp } from '../src/app';
import { createWorkerMetrics, type WorkerMetrics } from '../src/features/metrics/metrics';
import { startPaymentWorker } from '../src/features/payments/payment-worker';
import { deliver, pendingTopUp, QUOTA_PER_UNIT, sessionOf, settledEvent } from './payment-fixtures';

const logger = createLogger({ service: 'worker-test', level: 'silent' });
// A queue of its own: the other test files' jobs must not show in the depth this test checks.
const prefix = `${redisPrefix()}metrics:`;

let prisma: PrismaClient;
let redis: Redis;
let queueConnection: Redis;
let workerConnection: Redis;
let queue: Queue<PaymentWebhookJob>;
let worker: Worker<PaymentWebhookJob>;
let metrics: WorkerMetrics;

beforeAll(async () => {
  prisma = createTestPrisma();
  redis = createTestRedis();
  await setOption(prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
  queueConnection = createProducerConnection(testRedisUrl());
  workerConnection = createWorkerConnection(testRedisUrl());
  queue = createPaymentWebhookQueue(queueConnection, prefix);
  metrics = createWorkerMetrics(queue);
  worker = startPaymentWorker({
    prisma,
    logger,
    connection: workerConnection,
    publisher: queueConnection,
    redisPrefix: prefix,
    concurrency: 2,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
  });
  metrics.observe(worker);
  await worker.waitUntilReady();
});

afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await workerConnection.quit();
  await queueConnection.quit();
  await redis.quit();
  await prisma.$disconnect();
});

it('reports queue depth, jobs completed and failed, and events processed by outcome', async () => {
  const user = await createUser(prisma, { quota: 0 });
  const topUp = await pendingTopUp(prisma, user.id, 2);
  const paid = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'paid' });
  const unknownTopUp = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_unknown', paymentStatus: 'paid' });
  const other = checkoutEvent({ type: 'customer.created', clientReferenceId: null });
  const wrongAmount = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(await pendingTopUp(prisma, user.id, 3)), amountTotal: 1, paymentStatus: 'paid' });
  const wrongCurrency = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(await pendingTopUp(prisma, user.id, 3)), currency: 'jpy', paymentStatus: 'paid' });
  for (const event of [paid, unknownTopUp, other, wrongAmount, wrongCurrency]) {
    await deliver(prisma, queue, event);
    await settledEvent(prisma, event.id);
  }
  // A job whose event is not in the inbox: given up at once, left in the failed set.
  await enqueuePaymentWebhook(queue, { provider: 'stripe', eventId: 'evt_not_in_the_inbox' });
  // A job due in an hour: delayed.
  await queue.add('stripe:evt_later', { provider: 'stripe', eventId: 'evt_later' }, { jobId: 'evt_later', delay: 3_600_000 });

  const app = createWorkerApp({ logger, prisma, redis, metrics: metrics.service });
  await request(app).get('/readyz');
  const text = await waitFor(async () => {
    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    return metricValue(res.text, 'worker_jobs_failed_total', { final: 'true' }) === 1 ? res.text : undefined;
  }, 'the failed job to be counted');

  const queueName = queue.name;
  const depth = (state: string) => metricValue(text, 'worker_queue_jobs', { service: 'worker', queue: queueName, state });
  expect({ waiting: depth('waiting'), active: depth('active'), delayed: depth('delayed'), failed: depth('failed') }).toEqual({
    waiting: 0,
    active: 0,
    delayed: 1,
    failed: 1,
  });
  expect(metricValue(text, 'worker_jobs_completed_total', { queue: queueName })).toBe(5);
  expect(metricValue(text, 'worker_jobs_failed_total', { queue: queueName, final: 'false' })).toBe(0);
  const processed = (outcome: string) => metricValue(text, 'worker_webhook_events_processed_total', { provider: 'stripe', outcome });
  expect(['credited', 'rejected', 'ignored', 'failed', 'closed', 'already-done'].map(processed)).toEqual([1, 3, 1, 1, 0, 0]);
  // Why payments were refused: a tampered amount or currency is visible apart from other rejections.
  const rejected = (reason: string) => metricValue(text, 'worker_payments_rejected_total', { provider: 'stripe', reason });
  expect(['amount_mismatch', 'currency_mismatch', 'unknown_top_up', 'session_mismatch', 'unverifiable'].map(rejected)).toEqual([1, 1, 1, 0, 0]);
  expect(metricValue(text, 'http_request_duration_seconds_count', { service: 'worker', route: '/readyz', status: 200 })).toBe(1);
  expect(metricValue(text, 'process_resident_memory_bytes', { service: 'worker' })).toBeGreaterThan(0);
});

it('leaves the queue depth out, rather than stale, while Redis cannot be reached', async () => {
  const unreachable = createProducerConnection('redis://127.0.0.1:1', { lazyConnect: true, retryStrategy: () => null, disconnectTimeout: 10 });
  unreachable.on('error', () => undefined);
  const offlineQueue = createPaymentWebhookQueue(unreachable, prefix);
  offlineQueue.on('error', () => undefined);
  try {
    const offline = createWorkerMetrics(offlineQueue, { defaultMetrics: false });
    const res = await request(createWorkerApp({ logger, prisma, redis, metrics: offline.service })).get('/metrics');
    expect(res.status).toBe(200);
    expect(metricValue(res.text, 'worker_queue_jobs', { state: 'waiting' })).toBeUndefined();
    expect(metricValue(res.text, 'worker_jobs_completed_total')).toBe(0);
  } finally {
    await offlineQueue.close().catch(() => undefined);
    unreachable.disconnect();
  }
});
