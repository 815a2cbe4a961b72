// OpenTelemetry in the worker: a span per job processed (queue, job id, attempt), failed when the job fails,
// continuing the trace of the producer when the job carries one.
import type { PrismaClient } from '@modelgate/db';
import { createLogger } from '@modelgate/logger';
import { closeRedis, createMailQueue, createProducerConnection, createWorkerConnection, enqueueMail, MAIL_JOB_OPTIONS, type MailJob, type Queue, type Redis, type Worker } from '@modelgate/queue';
import { contextFromHeaders } from '@modelgate/telemetry';
import { createTestPrisma, redisPrefix, resetDatabase, setOption, testRedisUrl } from '@modelgate/testing';
import { waitFor } from '@modelgate/testing/processes';
import { type SmtpSink, startSmtpSink } from '@modelgate/testing/smtp-sink';
import { recordSpans, type RecordedSpans } from '@modelgate/testing/spans';
import { startMailWorker } from '../src/features/mail/mail-worker';

let recorded: RecordedSpans;
let prisma: PrismaClient;
let queueConnection: Redis;
let workerConnection: Redis;
let queue: Queue<MailJob>;
let worker: Worker<MailJob>;
let sink: SmtpSink;

beforeAll(async () => {
  // Before the worker is built: its processor is wrapped only when tracing is on.
  recorded = await recordSpans('worker');
  prisma = createTestPrisma();
  await resetDatabase(prisma);
  queueConnection = createProducerConnection(testRedisUrl());
  workerConnection = createWorkerConnection(testRedisUrl());
  queue = createMailQueue(queueConnection, redisPrefix());
  const logger = createLogger({ service: 'worker-test', level: 'silent' });
  worker = startMailWorker({ prisma, logger, connection: workerConnection, redisPrefix: redisPrefix(), lockDurationMs: 30_000, stalledIntervalMs: 30_000 });
  await worker.waitUntilReady();
  sink = await startSmtpSink();
  await setOption(prisma, 'SMTPFrom', 'Modelgate <noreply@gateway.example.com>');
});

afterAll(async () => {
  await worker.close();
  await queue.close();
  await closeRedis(workerConnection);
  await closeRedis(queueConnection);
  await sink.stop();
  await prisma.$disconnect();
  await recorded.stop();
});

test('each attempt of a job is a span: failed while SMTP is not set, then successful', async () => {
  const job = await queue.add('mail', { to: 'traced@example.com', subject: 'Traced mail', text: 'hello' }, { ...MAIL_JOB_OPTIONS, backoff: { type: 'fixed', delay: 200 } });
  const failed = await waitFor(() => recorded.spans().find((span) => span.attributes['modelgate.attempt'] === 1), 'the first attempt’s span');
  expect(failed.name).toBe('mail process');
  expect(failed.status.code).toBe(2);
  expect(failed.attributes).toMatchObject({ 'messaging.system': 'bullmq', 'messaging.destination.name': 'mail', 'messaging.message.id': job.id, 'modelgate.job_name': 'mail' });
  // Queued without a producer's context (as by an older release): a trace of its own.
  expect(job.data).not.toHaveProperty('trace');
  expect(failed.parentSpanContext).toBeUndefined();

  await setOption(prisma, 'SMTPServer', sink.host);
  await setOption(prisma, 'SMTPPort', String(sink.port));
  await sink.waitForMail((mail) => mail.subject === 'Traced mail');
  const sent = await waitFor(() => recorded.spans().find((span) => span.status.code !== 2), 'a successful attempt’s span');
  expect(sent.attributes['messaging.message.id']).toBe(job.id);
  expect(sent.attributes['modelgate.attempt']).toBeGreaterThan(1);
});

test('a job queued under a span is processed in a child span of it, in its trace', async () => {
  const producer = contextFromHeaders({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
  await enqueueMail(queue, { to: 'child@example.com', subject: 'Child mail', text: 'hello' }, producer);
  await sink.waitForMail((mail) => mail.subject === 'Child mail');
  const span = await waitFor(() => recorded.spans().find((s) => s.spanContext().traceId === '4bf92f3577b34da6a3ce929d0e0e4736'), 'the job’s span');
  expect(span.name).toBe('mail process');
  expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
});
