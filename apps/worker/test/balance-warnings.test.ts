// docs/api.md 3.9.6: the balance-warning worker sends what the user asked for: a mail job, or a
// signed webhook to an address the rules allow, retried while the receiver fails.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encryptSecret, type PrismaClient } from '@modelgate/db';
import { createLogger } from '@modelgate/logger';
import {
  BALANCE_WARNING_JOB_OPTIONS,
  type BalanceWarningJob,
  closeRedis,
  createBalanceWarningQueue,
  createMailQueue,
  createProducerConnection,
  createWorkerConnection,
  type Job,
  type MailJob,
  type Queue,
  type Redis,
  type Worker,
} from '@modelgate/queue';
import { createTestPrisma, createUser, redisPrefix, resetDatabase, setOption, TEST_CRYPTO_SECRET, testRedisUrl, type UserOverrides } from '@modelgate/testing';
import { waitFor } from '@modelgate/testing/processes';
import { startSmtpSink } from '@modelgate/testing/smtp-sink';
import { startBalanceWarningWorker } from '../src/features/balance-warnings/balance-warning-worker';
import { startMailWorker } from '../src/features/mail/mail-worker';

jest.setTimeout(60_000);

const CRYPTO_SECRET = process.env.CRYPTO_SECRET ?? TEST_CRYPTO_SECRET;
const SECRET = 'whsec-worker-test-7f3a9c';
/** A receiver's path often carries a token of its own: it must not reach the log either. */
const HOOK_PATH = '/hooks/modelgate-tok-5be21d';
const CROSSED_AT = Date.UTC(2026, 10, 29, 8, 30, 15, 250);
/** The queue's own policy, with retries 100 ms apart instead of 15 s and more. */
const FAST_RETRIES = { ...BALANCE_WARNING_JOB_OPTIONS, attempts: 3, backoff: { type: 'fixed', delay: 100 } } as const;

interface Delivery {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let prisma: PrismaClient;
let queueConnection: Redis;
let workerConnection: Redis;
let warnings: Queue<BalanceWarningJob>;
let mails: Queue<MailJob>;
let worker: Worker<BalanceWarningJob>;
let receiver: Server;
let receiverPort: number;
const deliveries: Delivery[] = [];
/** Statuses the receiver answers with, in turn; 200 once they are used up. */
const answers: number[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  prisma = createTestPrisma();
  queueConnection = createProducerConnection(testRedisUrl());
  workerConnection = createWorkerConnection(testRedisUrl());
  warnings = createBalanceWarningQueue(queueConnection, redisPrefix());
  mails = createMailQueue(queueConnection, redisPrefix());
  const logger = createLogger({ service: 'worker-test', level: 'trace', destination: { write: (line: string) => logLines.push(line) } });
  worker = startBalanceWarningWorker({
    prisma,
    logger,
    mailQueue: mails,
    cryptoSecret: CRYPTO_SECRET,
    connection: workerConnection,
    redisPrefix: redisPrefix(),
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
  });
  await worker.waitUntilReady();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = answers.shift() ?? 200;
      res.writeHead(status, status >= 300 && status < 400 ? { location: `http://localhost:${receiverPort}/elsewhere` } : {});
      res.end('{"ok": true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
});

afterAll(async () => {
  await worker.close();
  await warnings.close();
  await mails.close();
  await closeRedis(workerConnection);
  await closeRedis(queueConnection);
  await new Promise((resolve) => receiver.close(resolve));
  await prisma.$disconnect();
});

beforeEach(async () => {
  await resetDatabase(prisma);
  await Promise.all([warnings.obliterate({ force: true }), mails.obliterate({ force: true })]);
  deliveries.length = 0;
  answers.length = 0;
  logLines.length = 0;
  await setOption(prisma, 'ServerAddress', 'https://gateway.example.com');
});

const hookUrl = (host = 'localhost') => `http://${host}:${receiverPort}${HOOK_PATH}`;

function webhookUser(overrides: UserOverrides = {}) {
  return createUser(prisma, {
    username: 'alice',
    notifyType: 'webhook',
    quotaWarningThreshold: 500_000n,
    webhookUrl: hookUrl(),
    webhookSecretEnc: encryptSecret(SECRET, CRYPTO_SECRET),
    ...overrides,
  });
}

/** Queues a crossing from 600000 to 200000 quota (USD 1.20 -> 0.40 at the default 500000 per USD). */
async function warn(userId: number, options: { attempts?: number } = {}): Promise<Job<BalanceWarningJob>> {
  return warnings.add('balance-warning', { userId, before: '600000', after: '200000', crossedAt: CROSSED_AT }, { ...FAST_RETRIES, ...options, jobId: `u${userId}-${CROSSED_AT}` });
}

/** The job once it finished for good: completed, or failed after its last attempt. */
async function finished(job: Job<BalanceWarningJob>): Promise<Job<BalanceWarningJob>> {
  return waitFor(
    async () => {
      const state = await job.getState();
      if (state !== 'completed' && state !== 'failed') return undefined;
      return warnings.getJob(job.id!);
    },
    `balance-warning job ${job.id} to finish`,
  );
}

async function queuedMails(): Promise<MailJob[]> {
  return (await mails.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed'])).map((job) => job.data);
}

function expectNothingLeaked(): void {
  const log = logLines.join('');
  expect(log).not.toContain(SECRET);
  expect(log).not.toContain(HOOK_PATH);
}

describe('warnings by webhook', () => {
  beforeEach(() => setOption(prisma, 'WebhookAllowPrivate', true));

  it('POSTs the JSON payload once, signed with the user\'s secret over the exact body', async () => {
    const user = await webhookUser();
    const job = await finished(await warn(user.id));
    expect(await job.getState()).toBe('completed');
    expect(job.returnvalue).toBe('posted');

    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries;
    expect(delivery).toMatchObject({ method: 'POST', url: HOOK_PATH });
    expect(delivery?.headers['content-type']).toBe('application/json');
    const expected = `sha256=${createHmac('sha256', SECRET).update(delivery?.body ?? '').digest('hex')}`;
    expect(delivery?.headers['x-modelgate-signature']).toBe(expected);
    expect(JSON.parse(delivery?.body ?? '')).toEqual({
      type: 'balance.low',
      user_id: user.id,
      username: 'alice',
      quota: 200_000,
      threshold: 500_000,
      quota_per_unit: 500_000,
      crossed_at: Math.floor(CROSSED_AT / 1000),
    });
    expectNothingLeaked();
  });

  it('is retried after a 500, and delivered by the next attempt', async () => {
    const user = await webhookUser();
    answers.push(500);
    const job = await finished(await warn(user.id));
    expect(await job.getState()).toBe('completed');
    expect(job.attemptsMade).toBe(2);
    expect(deliveries).toHaveLength(2);
    // The same signed body both times.
    expect(deliveries[1]?.body).toBe(deliveries[0]?.body);
    expect(deliveries[1]?.headers['x-modelgate-signature']).toBe(deliveries[0]?.headers['x-modelgate-signature']);
    expectNothingLeaked();
  });

  it('gives up after the last attempt while the receiver keeps failing, and follows no redirect', async () => {
    const user = await webhookUser();
    answers.push(503, 302, 500);
    const job = await finished(await warn(user.id));
    expect(await job.getState()).toBe('failed');
    expect(job.attemptsMade).toBe(3);
    expect(job.failedReason).toMatch(/HTTP 500/);
    expect(deliveries.map((delivery) => delivery.url)).toEqual([HOOK_PATH, HOOK_PATH, HOOK_PATH]);
  });
});

describe('webhook addresses when WebhookAllowPrivate is off (the default)', () => {
  it.each(['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]'])('refuses %s at send time, without retrying, and sends nothing', async (host) => {
    // Saved while private addresses were allowed (or re-pointed since): checked again when sending.
    const user = await webhookUser({ webhookUrl: hookUrl(host) });
    const job = await finished(await warn(user.id));
    expect(await job.getState()).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(/non-public address/);
    expect(deliveries).toEqual([]);
    expectNothingLeaked();
  });
});

describe('warnings by email', () => {
  it('queue a mail with the balance and the threshold in USD and the wallet link', async () => {
    const user = await createUser(prisma, { email: 'alice@example.com', notificationEmail: 'billing@example.com', notifyType: 'email', quotaWarningThreshold: 500_000n });
    const job = await finished(await warn(user.id));
    expect(job.returnvalue).toBe('mailed');
    expect(await queuedMails()).toEqual([
      {
        to: 'billing@example.com',
        subject: 'Your Modelgate balance is low',
        text: 'Your Modelgate balance is USD 0.40, below your warning threshold of USD 1.00. Top up: https://gateway.example.com/wallet',
      },
    ]);
  });

  it('go to the account email when no other address is set', async () => {
    const user = await createUser(prisma, { email: 'alice@example.com', notifyType: 'email', quotaWarningThreshold: 500_000n });
    await finished(await warn(user.id));
    expect((await queuedMails()).map((mail) => mail.to)).toEqual(['alice@example.com']);
  });

  it('are delivered end to end by the mail worker through an SMTP server', async () => {
    const sink = await startSmtpSink();
    const mailConnection = createWorkerConnection(testRedisUrl());
    const mailWorker = startMailWorker({
      prisma,
      logger: createLogger({ service: 'worker-test', level: 'silent' }),
      connection: mailConnection,
      redisPrefix: redisPrefix(),
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
    });
    try {
      await setOption(prisma, 'SMTPServer', sink.host);
      await setOption(prisma, 'SMTPPort', String(sink.port));
      await setOption(prisma, 'SMTPFrom', 'Modelgate <noreply@gateway.example.com>');
      const user = await createUser(prisma, { email: 'carol@example.com', notifyType: 'email', quotaWarningThreshold: 1_000_000n });
      await warn(user.id);
      const mail = await sink.waitForMail();
      expect(mail.to).toEqual(['carol@example.com']);
      expect(mail.subject).toBe('Your Modelgate balance is low');
      expect(mail.text.trim()).toBe('Your Modelgate balance is USD 0.40, below your warning threshold of USD 2.00. Top up: https://gateway.example.com/wallet');
    } finally {
      await mailWorker.close();
      await closeRedis(mailConnection);
      await sink.stop();
    }
  });
});

describe('settings changed since the crossing', () => {
  it.each<[string, UserOverrides]>([
    ['warnings turned off', { notifyType: '' }],
    ['the threshold set to 0', { quotaWarningThreshold: 0n }],
    ['the threshold lowered below the balance', { quotaWarningThreshold: 100_000n }],
    ['no address left', { notifyType: 'email', email: null, notificationEmail: null }],
  ])('send nothing: %s', async (_, overrides) => {
    await setOption(prisma, 'WebhookAllowPrivate', true);
    const user = await webhookUser(overrides);
    const job = await finished(await warn(user.id));
    expect(await job.getState()).toBe('completed');
    expect(job.returnvalue).toBe('skipped');
    expect(deliveries).toEqual([]);
    expect(await queuedMails()).toEqual([]);
  });
});
