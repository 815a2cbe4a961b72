// Scale-out under fault: two relays, two account services and two workers as real processes on one
// PostgreSQL database and one Redis prefix. Balances, key limits and cache invalidations hold across
// the relays, a relay killed with -9 under load charges nothing twice, and webhooks delivered to both
// account services are credited once by the two workers.
import { join } from 'node:path';
import { ledgerMismatches, type PrismaClient } from '@modelgate/db';
import {
  createApiKey,
  createChannel,
  createTestPrisma,
  createTestRedis,
  createUser,
  deleteKeysWithPrefix,
  redisPrefix,
  resetDatabase,
  setOption,
  testDatabaseUrl,
  testRedisUrl,
} from '@modelgate/testing';
import { checkoutEvent, signStripePayload } from '@modelgate/testing/fake-stripe';
import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { freePort, retryOnPortClash, type ServiceProcess, startServiceProcess, startWorkerProcess, waitFor } from '@modelgate/testing/processes';
import { pendingTopUp, QUOTA_PER_UNIT, quotaOf, sessionOf, settledEvent, topUpLogs } from './payment-fixtures';

jest.setTimeout(120_000);

const APPS_DIR = join(__dirname, '../..');
const MODEL = 'replica-model';
/** 5 prompt + 5 completion tokens at unit prices: every call reserves and costs exactly 10 quota. */
const TEN_QUOTA_CALL = { model: MODEL, prompt: [1, 2, 3, 4, 5], max_tokens: 5 };
const ROOT = { username: 'root', password: 'replicas-root-password' };
const WEBHOOK_SECRET = 'whsec_replicas';
/** docs/api.md 2.4: a change made through any account service reaches every relay within this. */
const PROPAGATION_MS = 2_000;

type Service = ServiceProcess & { url: string };

let prisma: PrismaClient;
let upstream: FakeUpstream;
let relays: Service[] = [];
let accounts: Service[] = [];
let workers: ServiceProcess[] = [];
let relayEnv: (port: number, index: number) => Record<string, string>;

const data = () => ({ DATABASE_URL: testDatabaseUrl(), REDIS_URL: testRedisUrl(), REDIS_PREFIX: redisPrefix(), DATABASE_POOL_SIZE: '3', LOG_LEVEL: 'warn' });

const relayName = (index: number) => `replica-relay-${index + 1}`;

function withApplicationName(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', name);
  return url.toString();
}

async function startApp(app: 'relay' | 'account', port: number, env: Record<string, string>): Promise<Service> {
  const service = await startServiceProcess({
    entry: join(APPS_DIR, app, 'src/index.ts'),
    env,
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    timeoutMs: 60_000,
  });
  return Object.assign(service, { url: `http://127.0.0.1:${port}` });
}

/** Service `app` number `index` on a free port. */
function launch(app: 'relay' | 'account', index: number, envOf: (port: number, index: number) => Record<string, string>): Promise<Service> {
  return retryOnPortClash(async () => {
    const port = await freePort();
    return startApp(app, port, envOf(port, index));
  });
}

/** Two replicas; when either fails to start, the other is killed too. */
async function startTwo<T extends ServiceProcess>(start: (index: number) => Promise<T>): Promise<T[]> {
  const started = await Promise.allSettled([0, 1].map(start));
  const running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    for (const service of running) service.kill('SIGKILL');
    throw failure.reason;
  }
  return running;
}

beforeAll(async () => {
  prisma = createTestPrisma();
  const redis = createTestRedis();
  await resetDatabase(prisma);
  await deleteKeysWithPrefix(redis, redisPrefix());
  await redis.quit();
  upstream = await startFakeUpstream();
  await setOption(prisma, 'ModelRatio', { [MODEL]: 1 });
  await setOption(prisma, 'CompletionRatio', { [MODEL]: 1 });
  await setOption(prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
  await createChannel(prisma, { type: 1, baseUrl: upstream.url, models: MODEL, key: 'sk-upstream-replicas' });

  // Charges reach PostgreSQL within 250 ms; the periodic cache refresh is far out of the way, so only
  // the invalidation messages can make a change visible within the tests' 2 s. Each relay names its
  // database sessions, so the test can tell which relay's ledger writer is inside a transaction.
  relayEnv = (port, index) => ({
    ...data(),
    DATABASE_URL: withApplicationName(testDatabaseUrl(), relayName(index)),
    RELAY_PORT: String(port),
    LEDGER_FLUSH_INTERVAL_MS: '250',
    CACHE_REFRESH_INTERVAL_MS: '600000',
  });
  const relayLaunch = startTwo((index) => launch('relay', index, relayEnv));
  const launches = [
    relayLaunch,
    relayLaunch.then(([relay]) => startTwo((index) => launch('account', index, (port) => ({
      ...data(),
      ACCOUNT_PORT: String(port),
      RELAY_URL: relay!.url,
      ROOT_USERNAME: ROOT.username,
      ROOT_PASSWORD: ROOT.password,
      PASSWORD_HASH_MEMORY_KIB: '256',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    })))),
    startTwo(() => retryOnPortClash(() => startWorkerProcess(testRedisUrl()))),
  ] as const;
  const [relayResult, accountResult, workerResult] = await Promise.allSettled(launches);
  if (relayResult.status === 'fulfilled') relays = relayResult.value;
  if (accountResult.status === 'fulfilled') accounts = accountResult.value;
  if (workerResult.status === 'fulfilled') workers = workerResult.value;
  const failure = [relayResult, accountResult, workerResult].find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
}, 120_000);

afterAll(async () => {
  const running = [...relays, ...accounts, ...workers];
  await Promise.all(running.map((service) => {
    service.kill('SIGTERM');
    return service.exit;
  }));
  await upstream?.close();
  // The next test file of the run starts from an empty database and Redis prefix, as this one did.
  if (prisma) {
    await resetDatabase(prisma);
    await prisma.$disconnect();
  }
  const redis = createTestRedis();
  await deleteKeysWithPrefix(redis, redisPrefix());
  await redis.quit();
});

function relayAt(index: number): Service {
  const relay = relays[index];
  if (!relay) throw new Error(`relay #${index + 1} is not running`);
  return relay;
}

interface CallResult {
  status: number;
  code?: string;
}

/** One non-streamed completion through relay `index`; the status and the error code of a failure. */
async function call(index: number, key: string, body: object = TEN_QUOTA_CALL): Promise<CallResult> {
  const response = await fetch(`${relayAt(index).url}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, ...(answer.error?.code ? { code: answer.error.code } : {}) };
}

/** The logs and the balances agree: for every user, quota = the sum of its log rows. */
async function expectLedgerHolds(): Promise<void> {
  expect(await ledgerMismatches(prisma)).toEqual([]);
}

/** Until every charge the relays queued is written (the ledger's queue and batch in Redis are empty). */
async function ledgerDrained(timeoutMs = 15_000): Promise<void> {
  const redis = createTestRedis();
  try {
    const lists = [`${redisPrefix()}ledger:queue`, `${redisPrefix()}ledger:processing`];
    await waitFor(async () => (await Promise.all(lists.map((list) => redis.llen(list)))).every((length) => length === 0), 'the ledger to be written', timeoutMs);
  } finally {
    await redis.quit();
  }
}

interface Session {
  /** A JSON call to account service `index` with the session; resolves with the envelope's data. */
  api(index: number, method: string, path: string, body?: object): Promise<unknown>;
}

/** Root's session, opened on account service #1 and used on both: sessions live in the shared Redis. */
async function rootSession(): Promise<Session> {
  const login = await fetch(`${accounts[0]!.url}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ROOT),
  });
  const envelope = (await login.json()) as { success: boolean; data?: { id: number } };
  if (!envelope.success || !envelope.data) throw new Error(`root login failed: ${JSON.stringify(envelope)}`);
  const cookie = login.headers.getSetCookie().map((line) => line.split(';', 1)[0]).join('; ');
  const userId = String(envelope.data.id);
  return {
    async api(index, method, path, body) {
      const response = await fetch(`${accounts[index]!.url}${path}`, {
        method,
        headers: { cookie, 'new-api-user': userId, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const answer = (await response.json()) as { success: boolean; message: string; data?: unknown };
      if (response.status !== 200 || !answer.success) throw new Error(`${method} ${path}: ${response.status} ${answer.message}`);
      return answer.data;
    },
  };
}

/**
 * Makes a change through an account service, then polls both relays until each answers as `expected`
 * says: resolves with the milliseconds the slower relay took after the change was acknowledged.
 */
async function propagation(change: () => Promise<unknown>, probe: (index: number) => Promise<CallResult>, expected: (result: CallResult) => boolean): Promise<number> {
  await change();
  const started = Date.now();
  await Promise.all(relays.map((_, index) => waitFor(async () => expected(await probe(index)), `relay #${index + 1} to see the change`, 5_000, 50)));
  return Date.now() - started;
}

/** Signs `event` with the webhook secret and POSTs it to account service `index`; resolves with the status. */
async function deliverWebhook(index: number, event: { payload: string }): Promise<number> {
  const response = await fetch(`${accounts[index]!.url}/api/stripe/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signStripePayload(event.payload, WEBHOOK_SECRET) },
    body: event.payload,
  });
  await response.arrayBuffer();
  return response.status;
}

describe('changes made through either account service reach both relays within 2 s', () => {
  let root: Session;
  let key: string;
  let tokenId: number;
  let channelId: number;

  beforeAll(async () => {
    root = await rootSession();
    const user = await createUser(prisma, { quota: 1_000_000 });
    const created = await createApiKey(prisma, user.id, { unlimitedQuota: true });
    key = created.key;
    tokenId = created.token.id;
    channelId = (await prisma.channel.findFirstOrThrow()).id;
    for (const index of [0, 1]) expect(await call(index, key)).toEqual({ status: 200 });
  });

  test('a key disabled on account #1 and enabled again on account #2', async () => {
    const off = await propagation(() => root.api(0, 'PUT', '/api/token', { id: tokenId, status: 2 }), (i) => call(i, key), (r) => r.status === 401);
    const on = await propagation(() => root.api(1, 'PUT', '/api/token', { id: tokenId, status: 1 }), (i) => call(i, key), (r) => r.status === 200);
    expect(off).toBeLessThan(PROPAGATION_MS);
    expect(on).toBeLessThan(PROPAGATION_MS);
  });

  test('a channel disabled on account #2 and enabled again on account #1', async () => {
    const off = await propagation(() => root.api(1, 'PUT', '/api/channel', { id: channelId, status: 2 }), (i) => call(i, key), (r) => r.status !== 200);
    expect((await call(0, key)).code).toMatch(/^(model_not_found|no_available_channel)$/);
    const on = await propagation(() => root.api(0, 'PUT', '/api/channel', { id: channelId, status: 1 }), (i) => call(i, key), (r) => r.status === 200);
    expect(off).toBeLessThan(PROPAGATION_MS);
    expect(on).toBeLessThan(PROPAGATION_MS);
  });

  test("a model's price removed on account #1 and set again on account #2", async () => {
    const off = await propagation(
      () => root.api(0, 'PUT', '/api/option', { key: 'ModelRatio', value: JSON.stringify({ 'some-other-model': 1 }) }),
      (i) => call(i, key),
      (r) => r.code === 'model_price_error',
    );
    const on = await propagation(
      () => root.api(1, 'PUT', '/api/option', { key: 'ModelRatio', value: JSON.stringify({ [MODEL]: 1 }) }),
      (i) => call(i, key),
      (r) => r.status === 200,
    );
    expect(off).toBeLessThan(PROPAGATION_MS);
    expect(on).toBeLessThan(PROPAGATION_MS);
  });
});

test('one balance shared exactly by both relays: 60 calls of 10 against 250 quota, 25 served, none below 0', async () => {
  const user = await createUser(prisma, { quota: 250 });
  const { key } = await createApiKey(prisma, user.id, { unlimitedQuota: true });
  const results = await Promise.all(Array.from({ length: 60 }, (_, i) => call(i % 2, key)));

  expect(results.filter((r) => r.status === 200)).toHaveLength(25);
  expect(results.filter((r) => r.status !== 200).every((r) => r.status === 403)).toBe(true);
  await ledgerDrained();
  expect(await quotaOf(prisma, user.id)).toBe(0);
  expect(await prisma.log.count({ where: { userId: user.id, type: 2 } })).toBe(25);
  await expectLedgerHolds();
});

test("a key's requests-per-minute limit holds across both relays: 12 calls at rpm 5, 5 served, 7 refused with 429", async () => {
  const user = await createUser(prisma, { quota: 1_000_000 });
  const { key } = await createApiKey(prisma, user.id, { unlimitedQuota: true, rpmLimit: 5 });
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => call(i % 2, key)));

  expect(results.filter((r) => r.status === 200)).toHaveLength(5);
  expect(results.filter((r) => r.status === 429)).toHaveLength(7);
});

test('20 webhook deliveries (5 events, each twice to each account service) credit each top-up once through two workers', async () => {
  const payments = await Promise.all([1, 2, 3, 4, 5].map(async (amount) => {
    const user = await createUser(prisma);
    const topUp = await pendingTopUp(prisma, user.id, amount);
    const event = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'paid' });
    return { user, amount, event };
  }));
  const deliveries = payments.flatMap(({ event }) => [0, 1, 0, 1].map((index) => ({ index, event })));
  const statuses = await Promise.all(deliveries.map(({ index, event }) => deliverWebhook(index, event)));

  expect(statuses).toEqual(Array(20).fill(200));
  for (const { user, amount, event } of payments) {
    expect((await settledEvent(prisma, event.id)).status).toBe('processed');
    expect(await quotaOf(prisma, user.id)).toBe(amount * QUOTA_PER_UNIT);
    expect(await topUpLogs(prisma, user.id)).toHaveLength(1);
  }
  expect(await prisma.paymentEvent.count({ where: { eventId: { in: payments.map((p) => p.event.id) } } })).toBe(5);
  await expectLedgerHolds();
});

/**
 * Holds a user's row in a transaction of the test's own, so the ledger writer that takes a batch
 * charging that user blocks inside its transaction, between taking the batch and committing it.
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

/** The relay whose database session waits for a row lock (its ledger writer, mid-batch). */
async function relayBlockedInBatch(): Promise<{ index: number } | undefined> {
  const rows = await prisma.$queryRaw<{ name: string }[]>`
    SELECT application_name AS name FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name LIKE 'replica-relay-%'`;
  const index = relays.findIndex((_, i) => rows.some((row) => row.name === relayName(i)));
  return index >= 0 ? { index } : undefined;
}

test('a relay killed with -9 mid-batch under load and restarted: quota = sum of log rows, every answered call charged exactly once', async () => {
  const STARTING_QUOTA = 10_000_000;
  const user = await createUser(prisma, { quota: STARTING_QUOTA });
  const { key } = await createApiKey(prisma, user.id, { unlimitedQuota: true });
  // A payer whose balance is spent, who tops up while the dead relay's ledger lock is still held.
  const payer = await createUser(prisma, { quota: 10 });
  const { key: payerKey } = await createApiKey(prisma, payer.id, { unlimitedQuota: true });
  expect(await call(0, payerKey)).toEqual({ status: 200 });
  expect((await call(1, payerKey)).status).toBe(403);
  // Streamed answers of 5 chunks 30 ms apart: calls are in flight at the relay when it dies.
  upstream.setMode('ok', { chunks: 5, chunkDelayMs: 30 });
  const calls: { requestId: string; relay: number; startedAt: number; answeredAt?: number; failed?: boolean }[] = [];
  let loading = true;

  /** One streamed call; answered when the stream ended with [DONE]. */
  async function streamedCall(relay: number): Promise<void> {
    const record: (typeof calls)[number] = { requestId: `replica-load-${calls.length + 1}`, relay, startedAt: Date.now() };
    calls.push(record);
    try {
      const response = await fetch(`${relayAt(relay).url}/v1/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': record.requestId },
        body: JSON.stringify({ ...TEN_QUOTA_CALL, stream: true }),
      });
      const text = await response.text();
      if (response.status === 200 && text.trimEnd().endsWith('data: [DONE]')) record.answeredAt = Date.now();
    } catch {
      // Refused while the relay is down, or cut by the kill: no answer, perhaps charged, never twice.
      record.failed = true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const callers = Array.from({ length: 50 }, async (_, caller) => {
    while (loading) await streamedCall(caller % 2);
  });
  let killedAt = 0;
  let restartedAt = 0;
  let victim = -1;
  try {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lock = lockUserRow(user.id);
    await lock.locked;
    try {
      ({ index: victim } = await waitFor(relayBlockedInBatch, 'a ledger writer to block inside its batch transaction', 5_000));
      const killed = relayAt(victim);
      killed.kill('SIGKILL');
      killedAt = Date.now();
      await killed.exit;
    } finally {
      lock.release();
      await lock.done;
    }
    const topUp = await pendingTopUp(prisma, payer.id, 1);
    const paid = checkoutEvent({ type: 'checkout.session.completed', session: sessionOf(topUp), paymentStatus: 'paid' });
    expect(await deliverWebhook(0, paid)).toBe(200);
    const port = Number(new URL(relayAt(victim).url).port);
    relays[victim] = await startApp('relay', port, relayEnv(port, victim));
    restartedAt = Date.now();
    // Load goes on for a second after the restart, so the new relay serves some of it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    loading = false;
    await Promise.all(callers);
    upstream.setMode('ok', { chunks: 5, chunkDelayMs: 0 });
  }

  // The dead writer's batch stays in `processing`, under a Redis lock that expires 30 s after it was
  // taken: the next writer then finds the batch uncommitted and requeues it.
  await ledgerDrained(45_000);
  // The relays' reloads of the payer's balance outwaited the orphaned lock: the top-up is spendable.
  expect(await quotaOf(prisma, payer.id)).toBe(QUOTA_PER_UNIT);
  for (const index of [0, 1]) {
    await waitFor(async () => (await call(index, payerKey)).status === 200, `relay #${index + 1} to let the payer spend the top-up`, 5_000, 100);
  }
  expect(relays.some((relay) => relay.output().includes('requeued an unwritten ledger batch'))).toBe(true);
  const consumed = await prisma.log.findMany({ where: { userId: user.id, type: 2 }, select: { requestId: true, quota: true } });
  const rowsPerRequest = new Map<string | null, number>();
  for (const row of consumed) rowsPerRequest.set(row.requestId, (rowsPerRequest.get(row.requestId) ?? 0) + 1);
  const sent = new Set(calls.map((c) => c.requestId));
  const answered = calls.filter((c) => c.answeredAt !== undefined);

  // The fault happened as intended: calls on the victim were cut, and the restarted relay served.
  expect(calls.filter((c) => c.relay === victim && c.failed && c.startedAt < killedAt).length).toBeGreaterThan(0);
  expect(answered.filter((c) => c.relay === victim && c.startedAt > restartedAt).length).toBeGreaterThan(0);
  // Every answered call is charged once; no call is charged twice; no charge without a call.
  expect(answered.filter((c) => rowsPerRequest.get(c.requestId) !== 1)).toEqual([]);
  expect([...rowsPerRequest].filter(([id, rows]) => rows !== 1 || id === null || !sent.has(id))).toEqual([]);
  expect(consumed.every((row) => row.quota === -10n)).toBe(true);
  const charged = consumed.reduce((sum, row) => sum - Number(row.quota), 0);
  expect(await quotaOf(prisma, user.id)).toBe(STARTING_QUOTA - charged);
  await expectLedgerHolds();
}, 90_000);
