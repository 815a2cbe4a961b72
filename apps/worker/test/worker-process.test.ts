// The worker as a real process, killed at the worst moments: every payment is still credited once.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ledgerMismatches, type PrismaClient } from '@modelgate/db';
import {
  createPaymentWebhookQueue,
  createProducerConnection,
  enqueuePaymentWebhook,
  type PaymentWebhookJob,
  type Queue,
  Redis,
} from '@modelgate/queue';
import { createTestPrisma, createUser, redisPrefix, setOption, testDatabaseUrl } from '@modelgate/testing';
import { checkoutEvent } from '@modelgate/testing/fake-stripe';
import { freePort, type ScratchRedis, type ServiceProcess, startScratchRedis, startWorkerProcess, waitFor } from '@modelgate/testing/processes';
import { eventRow, pendingTopUp, QUOTA_PER_UNIT, quotaOf, sessionOf, storeEvent, topUpLogs } from './payment-fixtures';

jest.setTimeout(90_000);

let prisma: PrismaClient;
let redis: ScratchRedis;
let queueConnection: Redis;
let queue: Queue<PaymentWebhookJob>;
let worker: ServiceProcess | undefined;
/** The test's own connection for server commands (CLIENT PAUSE / LIST). */
let admin: Redis;

async function clientIds(): Promise<string[]> {
  const list = (await admin.call('CLIENT', 'LIST')) as string;
  return [...list.matchAll(/^id=(\d+)/gm)].map(([, id = '']) => id);
}

function startWorker(): Promise<ServiceProcess> {
  return startWorkerProcess(redis.url, {
    // A dead worker's job is picked up again after ~1.5 s instead of 30 s.
    WORKER_LOCK_DURATION_MS: '1500',
    WORKER_STALLED_INTERVAL_MS: '500',
    INBOX_SWEEP_INTERVAL_MS: '60000',
  });
}

async function killWorker(): Promise<void> {
  if (!worker) return;
  worker.kill('SIGKILL');
  await worker.exit;
  worker = undefined;
}

/**
 * Holds the user's row lock in a transaction of the test's own, so the worker's credit transaction
 * blocks right in the middle (after it moved the top-up, before it credited the user).
 */
function lockUserRow(userId: number): { locked: Promise<void>; release: () => void; done: Promise<void> } {
  let release!: () => void;
  let signalLocked!: () => void;
  const locked = new Promise<void>((resolve) => (signalLocked = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const done = prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM users WHERE id = ${userId} FOR UPDATE`;
    signalLocked();
    await released;
  }, { timeout: 60_000 });
  return { locked, release, done };
}

/** True once some session of the test database waits for a row lock: the worker is mid-transaction. */
async function workerIsBlocked(): Promise<boolean> {
  const [row] = await prisma.$queryRaw<{ waiting: number }[]>`
    SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return (row?.waiting ?? 0) > 0;
}

async function queuedPayment(amount: number) {
  const user = await createUser(prisma);
  const topUp = await pendingTopUp(prisma, user.id, amount);
  const event = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'paid' });
  await storeEvent(prisma, event);
  await enqueuePaymentWebhook(queue, { provider: 'stripe', eventId: event.id });
  return { user, topUp, event };
}

async function topUpStatus(id: number): Promise<string> {
  return (await prisma.topUp.findUniqueOrThrow({ where: { id } })).status;
}

beforeAll(async () => {
  prisma = createTestPrisma();
  await setOption(prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
  redis = await startScratchRedis();
  queueConnection = createProducerConnection(redis.url);
  queue = createPaymentWebhookQueue(queueConnection, redisPrefix());
  await queue.waitUntilReady();
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  await killWorker();
  admin?.disconnect();
  await queue?.close();
  queueConnection?.disconnect();
  await redis?.stop();
  await prisma.$disconnect();
});

test('killed in the middle of the credit transaction: nothing is half-applied, and after a restart it is credited once', async () => {
  const { user, topUp, event } = await queuedPayment(3);
  const lock = lockUserRow(user.id);
  await lock.locked;
  worker = await startWorker();
  await waitFor(workerIsBlocked, 'the worker to block inside its transaction');

  await killWorker();
  lock.release();
  await lock.done;

  // The killed worker's transaction never committed.
  expect(await topUpStatus(topUp.id)).toBe('pending');
  expect(await quotaOf(prisma, user.id)).toBe(0);

  worker = await startWorker();
  await waitFor(async () => (await eventRow(prisma, event.id)).status === 'processed', 'the stalled job to be re-run', 30_000);
  expect(await topUpStatus(topUp.id)).toBe('success');
  expect(await quotaOf(prisma, user.id)).toBe(3 * QUOTA_PER_UNIT);
  expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
});

test('killed after the transaction committed but before the job was marked done: the re-run credits nothing more', async () => {
  await killWorker();
  const testClients = await clientIds();
  const { user, topUp, event } = await queuedPayment(4);
  const lock = lockUserRow(user.id);
  await lock.locked;
  worker = await startWorker();
  await waitFor(workerIsBlocked, 'the worker to block inside its transaction');

  // Redis holds every write (such as completing a job) until unpaused: the worker can commit to
  // PostgreSQL but cannot mark the job done before it is killed.
  await admin.call('CLIENT', 'PAUSE', '60000', 'WRITE');
  try {
    lock.release();
    await lock.done;
    await waitFor(async () => (await topUpStatus(topUp.id)) === 'success', 'the credit to commit');
    await killWorker();
    // Redis drops a dead client's held commands only once it has noticed the disconnect.
    await waitFor(async () => (await clientIds()).every((id) => testClients.includes(id)), 'Redis to drop the killed worker');
  } finally {
    await admin.call('CLIENT', 'UNPAUSE');
  }

  expect(await (await queue.getJob(event.id))?.getState()).toBe('active'); // the job itself never finished
  expect(await quotaOf(prisma, user.id)).toBe(4 * QUOTA_PER_UNIT);

  worker = await startWorker();
  await waitFor(async () => (await queue.getJob(event.id))?.isCompleted(), 'the stalled job to be re-run to completion', 30_000);
  expect(await quotaOf(prisma, user.id)).toBe(4 * QUOTA_PER_UNIT);
  expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
  expect((await eventRow(prisma, event.id)).status).toBe('processed');
});

test('SIGTERM lets the job in progress finish, then exits 0; the ledger holds', async () => {
  worker ??= await startWorker();
  const { user, topUp, event } = await queuedPayment(1);
  const lock = lockUserRow(user.id);
  await lock.locked;
  await waitFor(workerIsBlocked, 'the worker to block inside its transaction');

  const running = worker;
  worker = undefined;
  running.kill('SIGTERM');
  // Shutdown has begun (the HTTP server is closed) while the job is still blocked: the process waits for it.
  await waitFor(async () => !(await fetch(running.readyUrl).then(() => true, () => false)), 'the HTTP server to close');
  expect(await topUpStatus(topUp.id)).toBe('pending');
  lock.release();
  await lock.done;
  const { code } = await running.exit;

  expect(code).toBe(0);
  expect(await topUpStatus(topUp.id)).toBe('success');
  expect(await (await queue.getJob(event.id))?.getState()).toBe('completed');
  expect(await quotaOf(prisma, user.id)).toBe(QUOTA_PER_UNIT);
  expect(await ledgerMismatches(prisma)).toEqual([]);
});

test('a boot failure (its port taken) is one line on stderr, without a stack, and exit code 1', async () => {
  const port = await freePort();
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', resolve));
  try {
    const child = spawn(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, join(__dirname, '../src/index.ts')], {
      env: { ...process.env, DATABASE_URL: testDatabaseUrl(), REDIS_URL: redis.url, REDIS_PREFIX: redisPrefix(), WORKER_PORT: String(port), LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^\[worker\] cannot start: .*EADDRINUSE/)]);
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});
