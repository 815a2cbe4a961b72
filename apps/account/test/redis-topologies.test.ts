// The account service's Redis paths (sessions, login rate limits, verification codes, invalidations)
// on a real Redis Cluster (three masters with a replica each) and a real Sentinel setup (master,
// replica, three sentinels), built as index.ts builds it, and again after the master is killed.
import { parseEnv, redisTargetOf } from '@modelgate/config';
import type { PrismaClient } from '@modelgate/db';
import { createLogger } from '@modelgate/logger';
import { closeRedis, createMailQueue, createPaymentWebhookQueue, createProducerConnection, createServiceRedis, duplicateRedis, invalidationChannel, type RedisClient, withErrorListener } from '@modelgate/queue';
import { createTestPrisma, createUser, redisPrefix, resetDatabase, TEST_PASSWORD, testDatabaseUrl } from '@modelgate/testing';
import { waitFor } from '@modelgate/testing/processes';
import { type RedisTopology, startRedisTopology } from '@modelgate/testing/redis-topologies';
import type { Express } from 'express';
import type { EventEmitter } from 'node:events';
import request from 'supertest';
import { createAccountApp } from '../src/app';
import type { AccountDeps } from '../src/deps';
import { accountEnvSchema } from '../src/env';
import { createAccountMetrics } from '../src/features/metrics/metrics';
import { consumeCode, issueCode } from '../src/features/verification/codes';

jest.setTimeout(60_000);

let prisma: PrismaClient;
beforeAll(() => {
  prisma = createTestPrisma();
});
afterAll(() => prisma.$disconnect());

describe.each(['cluster', 'sentinel'] as const)('on a Redis %s', (kind) => {
  let topology: RedisTopology;
  let redis: RedisClient;
  let queueConnection: RedisClient;
  let subscriber: RedisClient;
  let deps: AccountDeps;
  let app: Express;
  const messages: string[] = [];

  beforeAll(async () => {
    topology = await startRedisTopology(kind);
    const env = parseEnv(accountEnvSchema, {
      NODE_ENV: 'test',
      CRYPTO_SECRET: process.env.CRYPTO_SECRET,
      DATABASE_URL: testDatabaseUrl(),
      REDIS_PREFIX: redisPrefix(),
      PASSWORD_HASH_MEMORY_KIB: '256',
      ...topology.env,
    });
    const target = redisTargetOf(env);
    redis = withErrorListener(createServiceRedis(target), () => undefined);
    queueConnection = withErrorListener(createProducerConnection(target), () => undefined);
    subscriber = withErrorListener(duplicateRedis(redis, { maxRetriesPerRequest: null, enableOfflineQueue: true }), () => undefined);
    (subscriber as EventEmitter).on('message', (_channel: string, text: string) => messages.push(text));
    await subscriber.subscribe(invalidationChannel(env.REDIS_PREFIX));
    const logger = createLogger({ service: 'account', level: 'silent' });
    deps = {
      env,
      logger,
      prisma,
      redis,
      paymentQueue: createPaymentWebhookQueue(queueConnection, env.REDIS_PREFIX),
      mailQueue: createMailQueue(queueConnection, env.REDIS_PREFIX),
      metrics: createAccountMetrics(),
    };
    for (const queue of [deps.paymentQueue, deps.mailQueue]) queue.on('error', () => undefined);
    app = createAccountApp(deps);
    await resetDatabase(prisma);
  });

  afterAll(async () => {
    await deps?.paymentQueue.close();
    await deps?.mailQueue.close();
    for (const client of [subscriber, queueConnection, redis]) if (client) await closeRedis(client);
    await topology?.stop();
  });

  /** Logs in (a new session; the agent's previous one, if any, is replaced) and reads the user back. */
  async function logInAndRead(agent: ReturnType<typeof request.agent>, username: string): Promise<number> {
    const login = await agent.post('/api/user/login').send({ username, password: TEST_PASSWORD });
    if (login.status !== 200) return login.status;
    const self = await agent.get('/api/user/self').set('New-Api-User', String(login.body.data.id));
    return self.status;
  }

  it('keeps sessions, counts failed logins, checks codes and publishes invalidations', async () => {
    const user = await createUser(prisma, {});
    const agent = request.agent(app);
    expect(await logInAndRead(agent, user.username)).toBe(200);
    // A second login replaces the agent's session (two keys, two slots on a Cluster).
    expect(await logInAndRead(agent, user.username)).toBe(200);
    const wrong = await request(app).post('/api/user/login').send({ username: user.username, password: 'wrong-password' });
    expect(wrong.status).toBe(401);
    const code = await issueCode(deps, 'someone@example.com');
    expect(await consumeCode(deps, 'someone@example.com', code)).toBe(true);
    expect(await consumeCode(deps, 'someone@example.com', code)).toBe(false);
    const logout = await agent.post('/api/user/logout');
    expect(logout.status).toBe(200);
    // Disabling a user tells the relays (pub/sub) to drop what they cached.
    const admin = await createUser(prisma, { role: 100, username: 'root_admin' });
    const adminAgent = request.agent(app);
    const adminLogin = await adminAgent.post('/api/user/login').send({ username: admin.username, password: TEST_PASSWORD });
    await adminAgent.post('/api/user/manage').set('New-Api-User', String(adminLogin.body.data.id)).send({ id: user.id, action: 'disable' });
    await waitFor(() => messages.some((text) => text.includes(`"userId":${user.id}`)), 'the invalidation', 5_000);
  });

  it('logs in again within seconds of its master being killed', async () => {
    const user = await createUser(prisma, {});
    // Sessions are spread over a Cluster's slots: kill the master of one of them.
    await topology.failOver('x');
    await waitFor(async () => (await logInAndRead(request.agent(app), user.username)) === 200, 'a login after the failover', 15_000, 200);
  });
});
