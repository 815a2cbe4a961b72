// Outages: a real PostgreSQL outage (this run's database refuses connections and its
// sessions are terminated) and a real Redis outage (a private redis-server, stopped) answer 503 in
// the /api envelope, quickly, and the service serves again once they are back, without a restart.
import { createPaymentWebhookQueue, createProducerConnection, createServiceRedis } from '@modelgate/queue';
import { createUser, cutTestDatabase, redisPrefix } from '@modelgate/testing';
import { type ScratchRedis, startScratchRedis, waitFor } from '@modelgate/testing/processes';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { createAccountApp } from '../src/app';
import { hashAccessToken } from '../src/features/auth/require-user';
import { createTestAccount, type TestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { logIn, ROLE } from './support/users';

jest.setTimeout(60_000);

/** Set aside for this file's own Redis server (never the shared one on 6379). */
const SCRATCH_REDIS_PORT = 6392;
/** "Quickly": with room for a busy 2-core machine; the unfixed service took seconds. */
const FAST_MS = 1_000;

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await run();
  return [result, performance.now() - started];
}

describe('with PostgreSQL down', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = createTestAccount();
    await account.reset();
  });
  afterAll(() => account.close());

  it('answers 503 service_unavailable, not 500, and serves again once the database is back', async () => {
    await createUser(account.prisma, { username: 'pg_outage' });
    const user = await logIn(account.app, 'pg_outage');
    expectOk(await user.agent.get('/api/user/self'));

    const outage = await cutTestDatabase();
    try {
      const [self, selfMs] = await timed(() => user.agent.get('/api/user/self'));
      expectFailure(self, 503, 'service_unavailable');
      expect(selfMs).toBeLessThan(FAST_MS);
      expectFailure(await request(account.app).get('/api/status'), 503, 'service_unavailable');
      // Nothing of the driver's error reaches the client.
      expect(JSON.stringify(self.body)).not.toMatch(/prisma|postgres|57P01|55000|SELECT|mg_test_/i);
      // PostgreSQL is required: out of rotation until it is back.
      expect((await request(account.app).get('/readyz')).status).toBe(503);
      expect((await request(account.app).get('/health')).body).toMatchObject({ status: 'unavailable', checks: { database: { status: 'down', required: true } } });
    } finally {
      await outage.restore();
    }

    await waitFor(async () => (await request(account.app).get('/api/status')).status === 200, '/api/status to recover', 10_000);
    expect(expectOk(await user.agent.get('/api/user/self'))).toMatchObject({ username: 'pg_outage' });
    expect((await request(account.app).get('/readyz')).status).toBe(200);
  });
});

describe('with Redis down', () => {
  let redis: ScratchRedis;
  let account: TestAccount;
  let serviceRedis: Redis;
  let queueConnection: Redis;
  let queue: ReturnType<typeof createPaymentWebhookQueue>;
  let app: Express;

  beforeAll(async () => {
    redis = await startScratchRedis({ port: SCRATCH_REDIS_PORT });
    // Both connections as index.ts makes them, on the server this test stops.
    serviceRedis = createServiceRedis(redis.url, { lazyConnect: true }).on('error', () => undefined);
    await serviceRedis.connect();
    queueConnection = createProducerConnection(redis.url).on('error', () => undefined);
    queue = createPaymentWebhookQueue(queueConnection, redisPrefix());
    queue.on('error', () => undefined);
    account = createTestAccount({}, { redis: serviceRedis });
    await account.reset();
    app = createAccountApp({ ...account.deps, paymentQueue: queue });
  });
  afterAll(async () => {
    await queue?.close();
    queueConnection?.disconnect();
    await account?.close();
    await redis?.stop();
  });

  it('answers 503 at once where sessions, rate limits or the queue are needed; access tokens keep working; stays ready', async () => {
    const admin = await createUser(account.prisma, { username: 'redis_outage', role: ROLE.admin, accessTokenHash: hashAccessToken('t'.repeat(32)) });
    const event = await account.prisma.paymentEvent.create({ data: { provider: 'stripe', eventId: 'evt_outage', type: 'checkout.session.completed', payload: '{}' } });
    const session = await logIn(app, admin.username);
    expectOk(await session.agent.get('/api/user/self'));
    const bearer = (req: request.Test) => req.set('Authorization', `Bearer ${'t'.repeat(32)}`).set('New-Api-User', String(admin.id));

    await redis.stop();
    // Spread over a few seconds: ioredis's reconnection delays grow while Redis stays away.
    for (let round = 0; round < 3; round++) {
      const [login, loginMs] = await timed(() => request(app).post('/api/user/login').send({ username: admin.username, password: 'any-password' }));
      expectFailure(login, 503, 'service_unavailable');
      expect(loginMs).toBeLessThan(FAST_MS);
      const [self, selfMs] = await timed(() => session.agent.get('/api/user/self'));
      expectFailure(self, 503, 'service_unavailable');
      expect(selfMs).toBeLessThan(FAST_MS);
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    const [replay, replayMs] = await timed(() => bearer(request(app).post(`/api/payment/events/${event.id}/replay`)));
    expectFailure(replay, 503, 'service_unavailable');
    expect(replayMs).toBeLessThan(FAST_MS);
    expect(expectOk(await bearer(request(app).get('/api/user/self')))).toMatchObject({ id: admin.id });
    // Still ready (it serves tokens and webhooks); the detailed view tells what is missing, at once.
    expect((await request(app).get('/readyz')).status).toBe(200);
    const [health, healthMs] = await timed(() => request(app).get('/health'));
    expect({ status: health.status, body: health.body }).toEqual({
      status: 200,
      body: {
        status: 'degraded',
        checks: {
          database: { status: 'ok', required: true, latency_ms: expect.any(Number) },
          redis: { status: 'down', required: false, latency_ms: expect.any(Number) },
        },
      },
    });
    expect(healthMs).toBeLessThan(FAST_MS);

    // Back, empty (sessions lost, as after a restart without persistence): logging in works again.
    await redis.start();
    await waitFor(async () => (await request(app).get('/health')).body.status === 'ok', 'Redis to be seen again', 10_000);
    const again = await logIn(app, admin.username);
    expectOk(await again.agent.get('/api/user/self'));
    expectOk(await bearer(request(app).post(`/api/payment/events/${event.id}/replay`)));
  });
});
