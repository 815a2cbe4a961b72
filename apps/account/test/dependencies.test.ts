import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { resetDatabase } from '@modelgate/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { hashAccessToken } from '../src/features/auth/require-user';
import { createTestAccount, type TestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';

/** A local port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('with Redis down', () => {
  let account: TestAccount;
  beforeAll(async () => {
    // Fails every command at once, like a client whose server went away. No retries: a client left
    // reconnecting is one that close() must disconnect, and ioredis then keeps the process alive 2 s.
    const redis = new Redis(`redis://127.0.0.1:${await closedPort()}`, {
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    account = createTestAccount({}, { redis });
    await resetDatabase(account.prisma);
  });
  afterAll(() => account.close());

  it('answers 503 where sessions or rate limits are needed, and keeps access tokens working', async () => {
    // The login below fails before any password check, so the row needs no real hash.
    const user = await account.prisma.user.create({
      data: { username: 'redis_down', passwordHash: 'unused', accessTokenHash: hashAccessToken('t'.repeat(32)) },
    });
    const login = await request(account.app).post('/api/user/login').send({ username: user.username, password: 'any-password' });
    expectFailure(login, 503, 'service_unavailable');
    const sessionId = 'a'.repeat(43);
    const signed = `${sessionId}.${createHmac('sha256', account.deps.env.SESSION_SECRET).update(sessionId).digest('base64url')}`;
    const withCookie = await request(account.app).get('/api/user/self').set('Cookie', `session=${signed}`).set('New-Api-User', String(user.id));
    expectFailure(withCookie, 503, 'service_unavailable');
    const bearer = await request(account.app)
      .get('/api/user/self')
      .set('Authorization', `Bearer ${'t'.repeat(32)}`)
      .set('New-Api-User', String(user.id));
    expect(expectOk(bearer)).toMatchObject({ id: user.id });
    expect((await request(account.app).get('/readyz')).status).toBe(503);
  });
});
