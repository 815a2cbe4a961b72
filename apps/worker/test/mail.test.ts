// The mail worker against a real SMTP server (the sink): each queued mail goes out with the SMTP
// options read when it runs; an outage or a missing configuration delays mail but loses none, and
// no mail text or SMTP password ever reaches the log.
import type { PrismaClient } from '@modelgate/db';
import { metricValue } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import {
  closeRedis,
  createMailQueue,
  createPaymentWebhookQueue,
  createProducerConnection,
  createWorkerConnection,
  MAIL_JOB_OPTIONS,
  type MailJob,
  type PaymentWebhookJob,
  type Queue,
  type Redis,
  type Worker,
} from '@modelgate/queue';
import { createTestPrisma, redisPrefix, resetDatabase, setOption, testRedisUrl } from '@modelgate/testing';
import { waitFor } from '@modelgate/testing/processes';
import { type SmtpSink, startSmtpSink } from '@modelgate/testing/smtp-sink';
import { startMailWorker } from '../src/features/mail/mail-worker';
import { createWorkerMetrics, type WorkerMetrics } from '../src/features/metrics/metrics';

jest.setTimeout(60_000);

const SMTP_PASSWORD = 'smtp-app-password-5d1c';
/** The queue's own retry policy, with retries 200 ms apart instead of minutes. */
const FAST_RETRIES = { ...MAIL_JOB_OPTIONS, backoff: { type: 'fixed', delay: 200 } } as const;

let prisma: PrismaClient;
let queueConnection: Redis;
let workerConnection: Redis;
let queue: Queue<MailJob>;
let worker: Worker<MailJob>;
let sink: SmtpSink;
let metrics: WorkerMetrics;
/** Only for the metrics (their queue depth is the payment queue's). */
let paymentQueue: Queue<PaymentWebhookJob>;
const logLines: string[] = [];

function mail(n: number, to = `user${n}@example.com`): MailJob {
  return { to, subject: `Test mail ${n}`, text: `Your secret link: https://gateway.example.com/reset?token=secret-token-${n}` };
}

async function send(job: MailJob): Promise<string> {
  const added = await queue.add('mail', job, FAST_RETRIES);
  return added.id!;
}

async function useSink(target: SmtpSink): Promise<void> {
  await setOption(prisma, 'SMTPServer', target.host);
  await setOption(prisma, 'SMTPPort', String(target.port));
}

function logText(): string {
  return logLines.join('');
}

beforeAll(async () => {
  prisma = createTestPrisma();
  await resetDatabase(prisma);
  queueConnection = createProducerConnection(testRedisUrl());
  workerConnection = createWorkerConnection(testRedisUrl());
  queue = createMailQueue(queueConnection, redisPrefix());
  const logger = createLogger({ service: 'worker-test', level: 'trace', destination: { write: (line: string) => logLines.push(line) } });
  worker = startMailWorker({ prisma, logger, connection: workerConnection, redisPrefix: redisPrefix(), lockDurationMs: 30_000, stalledIntervalMs: 30_000 });
  paymentQueue = createPaymentWebhookQueue(queueConnection, redisPrefix());
  metrics = createWorkerMetrics(paymentQueue);
  metrics.observeJobs(worker);
  await worker.waitUntilReady();
  sink = await startSmtpSink();
  await setOption(prisma, 'SMTPFrom', 'Modelgate <noreply@gateway.example.com>');
});

afterAll(async () => {
  await worker.close();
  await queue.close();
  await paymentQueue.close();
  await closeRedis(workerConnection);
  await closeRedis(queueConnection);
  await sink.stop();
  await prisma.$disconnect();
});

test('a queued mail goes out as plain text from SMTPFrom, and the job is removed once sent', async () => {
  await useSink(sink);
  const id = await send(mail(1));
  const received = await sink.waitForMail((m) => m.subject === 'Test mail 1');
  expect(received).toMatchObject({ from: '"Modelgate" <noreply@gateway.example.com>', to: ['user1@example.com'], user: undefined });
  expect(received.text.trim()).toBe(mail(1).text);
  await waitFor(async () => !(await queue.getJob(id)), 'the sent job to be removed');
});

test('without SMTPServer mail waits (one warning), and goes out once root sets it; none is lost', async () => {
  await setOption(prisma, 'SMTPServer', '');
  logLines.length = 0;
  const ids = [await send(mail(2)), await send(mail(3))];
  await waitFor(async () => {
    const jobs = await Promise.all(ids.map((id) => queue.getJob(id)));
    return jobs.every((job) => (job?.attemptsMade ?? 0) >= 2);
  }, 'both mails to have been tried twice');
  const warnings = logLines.filter((line) => line.includes('SMTPServer is not set'));
  expect(warnings).toHaveLength(1);
  expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 'warn' });

  await useSink(sink);
  await sink.waitForMail((m) => m.subject === 'Test mail 2');
  await sink.waitForMail((m) => m.subject === 'Test mail 3');
  await waitFor(async () => (await Promise.all(ids.map((id) => queue.getJob(id)))).every((job) => !job), 'both jobs to finish');
  expect(sink.mails.filter((m) => m.subject === 'Test mail 2' || m.subject === 'Test mail 3')).toHaveLength(2);
});

test('while the SMTP server refuses service the mails are retried, and delivered exactly once when it is back', async () => {
  await useSink(sink);
  sink.setDown(true);
  const refusedBefore = sink.refusedConnections;
  const subjects = ['Test mail 4', 'Test mail 5', 'Test mail 6'];
  const ids = [await send(mail(4)), await send(mail(5)), await send(mail(6))];
  await waitFor(() => sink.refusedConnections - refusedBefore >= 6, 'each mail to be refused about twice');
  expect(sink.mails.filter((m) => subjects.includes(m.subject))).toHaveLength(0);
  for (const id of ids) expect(await (await queue.getJob(id))?.getState()).toMatch(/^(delayed|waiting|active)$/);

  sink.setDown(false);
  await waitFor(async () => (await Promise.all(ids.map((id) => queue.getJob(id)))).every((job) => !job), 'every job to finish', 20_000);
  expect(sink.mails.filter((m) => subjects.includes(m.subject)).map((m) => m.subject).sort()).toEqual(subjects);
  expect(logText()).toMatch(/"msg":"mail not sent"/);
});

test('signs in with SMTPAccount and SMTPToken; a new server or password is used from the next mail on', async () => {
  const secured = await startSmtpSink({ auth: { user: 'gateway', pass: SMTP_PASSWORD } });
  try {
    await useSink(secured);
    await setOption(prisma, 'SMTPAccount', 'gateway');
    await setOption(prisma, 'SMTPToken', 'wrong-password');
    const id = await send(mail(7));
    await waitFor(async () => ((await queue.getJob(id))?.attemptsMade ?? 0) >= 1, 'the attempt with the wrong password');
    expect(logText()).toMatch(/Authentication failed/);

    await setOption(prisma, 'SMTPToken', SMTP_PASSWORD);
    const received = await secured.waitForMail((m) => m.subject === 'Test mail 7');
    expect(received.user).toBe('gateway');
  } finally {
    await setOption(prisma, 'SMTPAccount', '');
    await setOption(prisma, 'SMTPToken', '');
    await secured.stop();
  }
});

test('a recipient the server refuses for good is not retried', async () => {
  const picky = await startSmtpSink({ rejectRecipients: ['nobody@example.com'] });
  try {
    await useSink(picky);
    const id = await send(mail(8, 'nobody@example.com'));
    await waitFor(async () => (await queue.getJob(id))?.isFailed(), 'the job to fail');
    const job = await queue.getJob(id);
    expect(job?.attemptsMade).toBe(1);
    expect(job?.failedReason).toMatch(/refused the recipient/);
    expect(picky.mails).toHaveLength(0);
  } finally {
    await picky.stop();
  }
});

test('the log never holds a mail text or the SMTP password', () => {
  const text = logText();
  expect(text).toMatch(/"msg":"mail sent"/);
  expect(text).not.toMatch(/secret-token|secret link/);
  expect(text).not.toContain(SMTP_PASSWORD);
});

test('/metrics counts the mail queue\'s jobs: sent, attempts retried, and the one given up', async () => {
  const text = await metrics.service.registry.metrics();
  expect(metricValue(text, 'worker_jobs_completed_total', { queue: 'mail' })).toBe(7);
  expect(metricValue(text, 'worker_jobs_failed_total', { queue: 'mail', final: 'true' })).toBe(1);
  expect(metricValue(text, 'worker_jobs_failed_total', { queue: 'mail', final: 'false' })).toBeGreaterThanOrEqual(10);
});
