import { contextFromHeaders } from '@modelgate/telemetry';
import { redisPrefix, testRedisUrl } from '@modelgate/testing';
import { waitFor } from '@modelgate/testing/processes';
import {
  createPaymentWebhookQueue,
  createPaymentWebhookWorker,
  createProducerConnection,
  createWorkerConnection,
  enqueuePaymentWebhook,
  type PaymentWebhookJob,
  paymentWebhookJobSchema,
  type Queue,
  type Redis,
  requeuePaymentWebhook,
  UnrecoverableError,
  type Worker,
} from '../src';

let producer: Redis;
let consumer: Redis;
let queue: Queue<PaymentWebhookJob>;
let worker: Worker<PaymentWebhookJob> | undefined;
/** How the consumer below treats each event id. */
const outcomes = new Map<string, 'complete' | 'fail'>();
const runs: string[] = [];

beforeAll(() => {
  producer = createProducerConnection(testRedisUrl());
  consumer = createWorkerConnection(testRedisUrl());
  queue = createPaymentWebhookQueue(producer, redisPrefix());
});

afterAll(async () => {
  await worker?.close();
  await queue.close();
  producer.disconnect();
  consumer.disconnect();
});

function startConsumer() {
  worker = createPaymentWebhookWorker(consumer, redisPrefix(), async (_job, data) => {
    runs.push(data.eventId);
    if (outcomes.get(data.eventId) === 'fail') throw new UnrecoverableError('gave up');
    return 'done';
  });
  worker.on('error', () => undefined);
}

const job = (eventId: string): PaymentWebhookJob => ({ provider: 'stripe', eventId });

test('event ids must be usable as BullMQ job ids', () => {
  expect(paymentWebhookJobSchema.safeParse(job('evt_1NfXk2ABC')).success).toBe(true);
  for (const bad of ['', '12345', 'evt:1', 'evt 1', 'x'.repeat(256)]) {
    expect(paymentWebhookJobSchema.safeParse(job(bad)).success).toBe(false);
  }
});

test('a job’s trace context is optional, and a malformed one is dropped rather than failing the job', () => {
  expect(paymentWebhookJobSchema.parse(job('evt_old'))).toStrictEqual(job('evt_old'));
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  expect(paymentWebhookJobSchema.parse({ ...job('evt_traced'), trace: { traceparent } })).toEqual({ ...job('evt_traced'), trace: { traceparent } });
  expect(paymentWebhookJobSchema.parse({ ...job('evt_bad'), trace: 'garbage' })).toEqual(job('evt_bad'));
});

test('with tracing off, a job carries no trace field even when queued under a context', async () => {
  await enqueuePaymentWebhook(queue, job('evt_untraced'), contextFromHeaders({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }));
  expect((await queue.getJob('evt_untraced'))?.data).toStrictEqual(job('evt_untraced'));
  await queue.obliterate({ force: true });
});

test('adding the same event twice keeps one job (the job id is the event id)', async () => {
  await enqueuePaymentWebhook(queue, job('evt_twice'));
  await enqueuePaymentWebhook(queue, job('evt_twice'));
  const stored = await queue.getJob('evt_twice');
  expect(stored?.data).toEqual(job('evt_twice'));
  expect(stored?.opts).toMatchObject({ attempts: 10, backoff: { type: 'exponential', delay: 1_000 } });
  expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
  await queue.obliterate({ force: true });
});

test('requeue: adds a missing job, leaves a pending one, and runs a finished one (completed or failed) again', async () => {
  expect(await requeuePaymentWebhook(queue, job('evt_missing'))).toBe('queued');
  expect(await requeuePaymentWebhook(queue, job('evt_missing'))).toBe('already-queued');

  outcomes.set('evt_failing', 'fail');
  await enqueuePaymentWebhook(queue, job('evt_failing'));
  startConsumer();
  await waitFor(async () => (await queue.getJob('evt_missing'))?.isCompleted(), 'evt_missing to complete');
  await waitFor(async () => (await queue.getJob('evt_failing'))?.isFailed(), 'evt_failing to fail');
  // A plain add is ignored while the finished job is retained...
  await enqueuePaymentWebhook(queue, job('evt_missing'));
  expect(await (await queue.getJob('evt_missing'))?.getState()).toBe('completed');

  // ...requeue runs it again.
  outcomes.set('evt_failing', 'complete');
  expect(await requeuePaymentWebhook(queue, job('evt_missing'))).toBe('requeued');
  expect(await requeuePaymentWebhook(queue, job('evt_failing'))).toBe('requeued');
  await waitFor(() => runs.filter((id) => id === 'evt_missing').length === 2, 'evt_missing to run again');
  await waitFor(async () => (await queue.getJob('evt_failing'))?.isCompleted(), 'evt_failing to complete on its second run');
});

test('a producer fails fast when Redis is unreachable instead of hanging the caller', async () => {
  const dead = createProducerConnection('redis://127.0.0.1:1', { disconnectTimeout: 10 });
  dead.on('error', () => undefined);
  const deadQueue = createPaymentWebhookQueue(dead, redisPrefix());
  deadQueue.on('error', () => undefined);
  const started = Date.now();
  await expect(enqueuePaymentWebhook(deadQueue, job('evt_nowhere'))).rejects.toThrow();
  expect(Date.now() - started).toBeLessThan(5_000);
  await deadQueue.close().catch(() => undefined);
  dead.disconnect();
});
