import type { AddressInfo } from 'node:net';
import { listen, UNREAD_BODY_DRAIN } from '@modelgate/http';
import { createUser, setOption, TEST_PASSWORD } from '@modelgate/testing';
import { uploadDeclaredBody, uploadEndlessBody } from '@modelgate/testing/uploads';
import request from 'supertest';
import { Agent, request as undiciRequest } from 'undici';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { totpAt } from './support/totp';
import { enableTwoFactor, passwordStep } from './support/two-factor';
import { logIn, loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

/** The `name=value` part of a Set-Cookie line, as a browser sends it back. */
const cookiePair = (setCookie: string) => setCookie.slice(0, (setCookie + ';').indexOf(';'));

function sessionCookie(res: request.Response): string {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const session = cookies.find((cookie) => cookie.startsWith('session='));
  if (!session) throw new Error('no session cookie set');
  return session;
}

describe('POST /api/user/register', () => {
  it('creates a user that can log in, and answers {id, username}', async () => {
    const res = await request(app).post('/api/user/register').send({ username: 'alice_1', password: 'pa55word!', email: 'a@example.com' });
    expect(expectOk(res)).toEqual({ id: expect.any(Number), username: 'alice_1' });
    const login = await request(app).post('/api/user/login').send({ username: 'a@example.com', password: 'pa55word!' });
    expect(expectOk(login)).toMatchObject({ username: 'alice_1', role: ROLE.user, status: 1, group: 'default' });
    const stored = await prisma.user.findUniqueOrThrow({ where: { username: 'alice_1' } });
    expect(stored.passwordHash).toMatch(/^\$argon2id\$/);
  });

  it('rejects a duplicate username with 409', async () => {
    await request(app).post('/api/user/register').send({ username: 'bob', password: 'pa55word!' }).expect(200);
    const res = await request(app).post('/api/user/register').send({ username: 'bob', password: 'other-pass' });
    expectFailure(res, 409, 'conflict', /username/);
  });

  it.each([
    [{ username: 'ab', password: 'pa55word!' }, /username/],
    [{ username: 'has space', password: 'pa55word!' }, /username/],
    [{ username: 'carol', password: 'short' }, /password/],
    [{ username: 'carol', password: 'pa55word!', email: 'not-an-email' }, /email/],
    [{ username: 'carol', password: 'pa55word!', role: 100 }, /role/],
    [{ username: 'carol', password: 'pa55word!', quota: 1e9 }, /quota/],
  ])('rejects %j with 400 naming the field', async (body, field) => {
    const res = await request(app).post('/api/user/register').send(body);
    expectFailure(res, 400, 'invalid_request', field);
    expect(await prisma.user.count()).toBe(0);
  });

  it('is refused with 403 while RegisterEnabled is false', async () => {
    await setOption(prisma, 'RegisterEnabled', 'false');
    const res = await request(app).post('/api/user/register').send({ username: 'dave', password: 'pa55word!' });
    expectFailure(res, 403, 'forbidden');
  });

  it('is rate limited per IP with 429 and Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await request(app).post('/api/user/register').set('X-Forwarded-For', '203.0.113.7').send({ username: `u${i}_x`, password: 'pa55word!' });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    // Another address is not affected.
    await request(app).post('/api/user/register').set('X-Forwarded-For', '203.0.113.8').send({ username: 'other', password: 'pa55word!' }).expect(200);
  });

  it('counts registrations of one IPv6 /64 as one address, and an IPv4-mapped address as its IPv4', async () => {
    const register = (username: string, address: string) =>
      request(app).post('/api/user/register').set('X-Forwarded-For', address).send({ username, password: 'pa55word!' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await register(`v6_${i}`, `2001:db8:1:2:${i.toString(16)}::${i + 1}`)).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    expect((await register('v6_other', '2001:db8:1:3::1')).status).toBe(200);

    for (let i = 0; i < 5; i++) expect((await register(`v4_${i}`, '203.0.113.50')).status).toBe(200);
    for (let i = 5; i < 10; i++) expect((await register(`v4_${i}`, '::ffff:203.0.113.50')).status).toBe(200);
    expectFailure(await register('v4_10', '::ffff:cb00:7132'), 429, 'rate_limited');
  });

  it('is rate limited per username from any address (5 attempts an hour), whatever the case', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request(app).post('/api/user/register').set('X-Forwarded-For', `198.51.100.${i}`).send({ username: 'mallory', password: 'pa55word!' });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 409, 409, 409, 409]);
    const limited = await request(app).post('/api/user/register').set('X-Forwarded-For', '198.51.100.77').send({ username: 'MALLORY', password: 'pa55word!' });
    expectFailure(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another name from the same addresses is not affected.
    await request(app).post('/api/user/register').set('X-Forwarded-For', '198.51.100.1').send({ username: 'trent', password: 'pa55word!' }).expect(200);
  });
});

describe('POST /api/user/login', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie for path / and answers the user', async () => {
    const user = await createUser(prisma, { displayName: 'Eve' });
    const res = await request(app).post('/api/user/login').send({ username: user.username, password: TEST_PASSWORD });
    expect(expectOk(res)).toEqual({ id: user.id, username: user.username, display_name: 'Eve', role: 1, status: 1, group: 'default' });
    const cookie = sessionCookie(res);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).toMatch(/Max-Age=604800/);
    expect(cookie).not.toMatch(/Secure/i);
  });

  it('marks the cookie Secure when COOKIE_SECURE=true', async () => {
    const secure = createTestAccount({ COOKIE_SECURE: 'true' });
    try {
      const user = await createUser(prisma);
      const res = await request(secure.app).post('/api/user/login').send({ username: user.username, password: TEST_PASSWORD });
      expect(sessionCookie(res)).toMatch(/Secure/);
    } finally {
      await secure.close();
    }
  });

  it('marks the cookie Secure by default when PUBLIC_URL is https, unless COOKIE_SECURE=false says otherwise', async () => {
    const user = await createUser(prisma);
    const cookieOf = async (env: Record<string, string>) => {
      const service = createTestAccount(env);
      try {
        return sessionCookie(await request(service.app).post('/api/user/login').send({ username: user.username, password: TEST_PASSWORD }));
      } finally {
        await service.close();
      }
    };
    expect(await cookieOf({ PUBLIC_URL: 'https://gateway.example.com' })).toMatch(/Secure/);
    expect(await cookieOf({ PUBLIC_URL: 'https://gateway.example.com', COOKIE_SECURE: 'false' })).not.toMatch(/Secure/);
    expect(await cookieOf({ PUBLIC_URL: 'http://gateway.example.com:8080' })).not.toMatch(/Secure/);
  });

  it('rejects a wrong password or unknown user with 401, the same way', async () => {
    const user = await createUser(prisma);
    const wrong = await request(app).post('/api/user/login').send({ username: user.username, password: 'wrong-password' });
    const unknown = await request(app).post('/api/user/login').send({ username: 'nobody_here', password: 'wrong-password' });
    expectFailure(wrong, 401, 'invalid_credentials');
    expectFailure(unknown, 401, 'invalid_credentials');
    expect(wrong.body.message).toBe(unknown.body.message);
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('gives a new session id at login, so a cookie planted before login is worthless', async () => {
    const user = await createUser(prisma);
    const first = await request(app).post('/api/user/login').send({ username: user.username, password: TEST_PASSWORD });
    const firstCookie = cookiePair(sessionCookie(first));
    const second = await request(app).post('/api/user/login').set('Cookie', firstCookie).send({ username: user.username, password: TEST_PASSWORD });
    const secondCookie = cookiePair(sessionCookie(second));
    expect(secondCookie).not.toBe(firstCookie);
    const old = await request(app).get('/api/user/self').set('Cookie', firstCookie).set('New-Api-User', String(user.id));
    expectFailure(old, 401, 'unauthorized');
    await request(app).get('/api/user/self').set('Cookie', secondCookie).set('New-Api-User', String(user.id)).expect(200);
  });

  it('locks a username at one address after 10 failures from it, with 429 and Retry-After, even for the right password; the owner elsewhere logs in', async () => {
    const user = await createUser(prisma);
    const attacker = '198.51.100.7';
    for (let i = 0; i < 10; i++) {
      const res = await request(app).post('/api/user/login').set('X-Forwarded-For', attacker).send({ username: user.username, password: 'wrong-password' });
      expect(res.status).toBe(401);
    }
    const locked = await request(app).post('/api/user/login').set('X-Forwarded-For', attacker).send({ username: user.username.toUpperCase(), password: TEST_PASSWORD });
    expectFailure(locked, 429, 'rate_limited');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    await request(app).post('/api/user/login').set('X-Forwarded-For', '203.0.113.9').send({ username: user.username, password: TEST_PASSWORD }).expect(200);
    // Another user at the attacker's address is not locked by failures on this one.
    const other = await createUser(prisma);
    await request(app).post('/api/user/login').set('X-Forwarded-For', attacker).send({ username: other.username, password: TEST_PASSWORD }).expect(200);
  });

  it('counts the address a real client connects from: ten failures from 127.0.0.7 do not lock the owner out on 127.0.0.1', async () => {
    const user = await createUser(prisma);
    const server = await listen(app, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/user/login`;
    const attacker = new Agent({ localAddress: '127.0.0.7' });
    const owner = new Agent({ localAddress: '127.0.0.1' });
    const attempt = async (dispatcher: Agent, password: string) => {
      const res = await undiciRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: user.username, password }), dispatcher });
      await res.body.dump();
      return res.statusCode;
    };
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push(await attempt(attacker, 'wrong-password'));
      expect(statuses).toEqual([...Array(10).fill(401), 429]);
      expect(await attempt(attacker, TEST_PASSWORD)).toBe(429);
      expect(await attempt(owner, TEST_PASSWORD)).toBe(200);
    } finally {
      await attacker.close();
      await owner.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('does not let failures spread over many addresses lock the owner out', async () => {
    const user = await createUser(prisma);
    for (let i = 0; i < 30; i++) {
      const res = await request(app).post('/api/user/login').set('X-Forwarded-For', `198.51.100.${i}`).send({ username: user.username, password: 'wrong-password' });
      expect(res.status).toBe(401);
    }
    await request(app).post('/api/user/login').set('X-Forwarded-For', '203.0.113.9').send({ username: user.username, password: TEST_PASSWORD }).expect(200);
  });

  it('limits failed logins per address (20 in 15 minutes), whatever the usernames, counting an IPv6 /64 as one address', async () => {
    const user = await createUser(prisma);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await request(app).post('/api/user/login').set('X-Forwarded-For', `2001:db8:5:6::${i + 1}`).send({ username: `nobody${i}`, password: 'wrong-password' });
      statuses.push(res.status);
    }
    expect(statuses).toEqual(Array(20).fill(401));
    const limited = await request(app).post('/api/user/login').set('X-Forwarded-For', '2001:db8:5:6:ffff::1').send({ username: user.username, password: TEST_PASSWORD });
    expectFailure(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    await request(app).post('/api/user/login').set('X-Forwarded-For', '2001:db8:5:7::1').send({ username: user.username, password: TEST_PASSWORD }).expect(200);
  });

  it('limits login attempts per IP', async () => {
    const user = await createUser(prisma);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const res = await request(app).post('/api/user/login').set('X-Forwarded-For', '192.0.2.1').send({ username: user.username, password: TEST_PASSWORD });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 30).every((status) => status === 200)).toBe(true);
    expect(statuses[30]).toBe(429);
  });

  it('refuses a disabled user with 403', async () => {
    const user = await createUser(prisma, { status: 2 });
    const res = await request(app).post('/api/user/login').send({ username: user.username, password: TEST_PASSWORD });
    expectFailure(res, 403, 'user_disabled');
  });

  it('rejects unknown fields', async () => {
    const res = await request(app).post('/api/user/login').send({ username: 'x', password: 'y', remember: true });
    expectFailure(res, 400, 'invalid_request', /remember/);
  });
});

describe('authenticated calls', () => {
  it('require New-Api-User matching the logged-in user (401 when missing, malformed or different)', async () => {
    const { agent, id } = await loggedInUser(account);
    await agent.get('/api/user/self').expect(200);
    for (const header of ['', 'abc', '1.5', String(id + 1)]) {
      const res = await agent.get('/api/user/self').set('New-Api-User', header);
      expectFailure(res, 401, 'unauthorized');
    }
    const cookieOnly = request(app).get('/api/user/self');
    expectFailure(await cookieOnly, 401, 'unauthorized');
  });

  it('stop working after logout, which is POST only: a GET answers 405 and ends nothing', async () => {
    const { agent } = await loggedInUser(account);
    const viaGet = await agent.get('/api/user/logout');
    expectFailure(viaGet, 405, 'method_not_allowed');
    expect(viaGet.headers.allow).toBe('POST');
    expect(viaGet.headers['set-cookie']).toBeUndefined();
    await agent.get('/api/user/self').expect(200);
    expectOk(await agent.post('/api/user/logout'));
    expectFailure(await agent.get('/api/user/self'), 401, 'unauthorized');
  });

  it('stop working at once when the user is disabled or deleted (403 / 401) even with a live session', async () => {
    const disabled = await loggedInUser(account);
    const deleted = await loggedInUser(account);
    await prisma.user.update({ where: { id: disabled.id }, data: { status: 2 } });
    await prisma.user.update({ where: { id: deleted.id }, data: { deletedAt: new Date() } });
    expectFailure(await disabled.agent.get('/api/user/self'), 403, 'user_disabled');
    expectFailure(await deleted.agent.get('/api/user/self'), 401, 'unauthorized');
  });

  it('see a demotion at once', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    await admin.agent.get('/api/channel/').expect(200);
    await prisma.user.update({ where: { id: admin.id }, data: { role: ROLE.user } });
    expectFailure(await admin.agent.get('/api/channel/'), 403, 'forbidden');
  });

  it('accept a Bearer access token; a new token replaces the old one', async () => {
    const { agent, id } = await loggedInUser(account);
    const first = expectOk(await agent.get('/api/user/token')) as string;
    expect(first).toMatch(/^[A-Za-z0-9]{32}$/);
    const withToken = (token: string) => request(app).get('/api/user/self').set('Authorization', `Bearer ${token}`).set('New-Api-User', String(id));
    expect(expectOk(await withToken(first))).toMatchObject({ id });
    expectFailure(await request(app).get('/api/user/self').set('Authorization', `Bearer ${first}`), 401, 'unauthorized');
    const second = expectOk(await agent.get('/api/user/token')) as string;
    expectFailure(await withToken(first), 401, 'unauthorized');
    await withToken(second).expect(200);
    const stored = await prisma.user.findUniqueOrThrow({ where: { id } });
    expect(stored.accessTokenHash).not.toContain(second);
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400 invalid_request', async () => {
    const res = await request(app).post('/api/user/login').set('Content-Type', 'application/json').send('{"username": ');
    expectFailure(res, 400, 'invalid_request');
  });

  it('answers a body over MAX_REQUEST_BODY_MB with 413', async () => {
    const small = createTestAccount({ MAX_REQUEST_BODY_MB: '1' });
    try {
      const res = await request(small.app).post('/api/user/login').send({ username: 'x', password: 'y'.repeat(1_100_000) });
      expectFailure(res, 413, 'request_too_large');
    } finally {
      await small.close();
    }
  });

  it('answers a declared length over the limit before reading it: a node:http client reads the 413, fast or slow, never a broken pipe', async () => {
    const small = createTestAccount({ MAX_REQUEST_BODY_MB: '1' });
    const server = await listen(small.app, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/user/login`;
    try {
      for (const [pace, times] of [['fast', 20], ['slow', 3]] as const) {
        for (let i = 0; i < times; i++) {
          const outcome = await uploadDeclaredBody(url, 8 * 1024 * 1024, pace);
          expect(outcome.error).toBeUndefined();
          expect(outcome.status).toBe(413);
          expect(outcome.headers?.connection).toBe('close');
          expect(outcome.body).toEqual({ success: false, message: 'request body exceeds 1 MB', code: 'request_too_large' });
        }
      }
      const started = Date.now();
      const endless = await uploadEndlessBody(url, 1e12);
      expect(endless.answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(endless.bytesSent).toBeGreaterThan(UNREAD_BODY_DRAIN.maxBytes);
      expect(endless.bytesSent).toBeLessThan(UNREAD_BODY_DRAIN.maxBytes + 16 * 1024 * 1024);
      expect(Date.now() - started).toBeLessThan(UNREAD_BODY_DRAIN.maxMs);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await small.close();
    }
  });

  it('answers unknown routes with the 404 envelope', async () => {
    expectFailure(await request(app).get('/api/nothing-here'), 404, 'not_found');
  });
});

describe('GET /api/status', () => {
  it('is public and reflects the options', async () => {
    await setOption(prisma, 'QuotaPerUnit', '1000');
    await setOption(prisma, 'RegisterEnabled', 'false');
    const data = expectOk(await request(app).get('/api/status'));
    expect(data).toEqual({
      version: expect.any(String),
      system_name: 'Modelgate',
      quota_per_unit: 1000,
      register_enabled: false,
      stripe_enabled: false,
      min_topup: 1,
      email_verification: false,
      smtp_enabled: false,
      oidc_enabled: false,
    });
  });
});

describe('profile', () => {
  it('GET /api/user/self returns the fields of docs/api.md 3.2', async () => {
    const { agent, id, username } = await loggedInUser(account, { quota: 1234 });
    expect(expectOk(await agent.get('/api/user/self'))).toEqual({
      id,
      username,
      display_name: '',
      role: 1,
      status: 1,
      email: '',
      group: 'default',
      quota: 1234,
      used_quota: 0,
      request_count: 0,
      aff_code: '',
      aff_count: 0,
      aff_quota: 0,
      aff_history_quota: 0,
      inviter_id: null,
      two_factor_enabled: false,
      created_at: expect.any(Number),
    });
  });

  it.each([['quota', 10 ** 9], ['role', 100], ['aff_quota', 10 ** 9], ['status', 1], ['group', 'vip']])(
    'PUT /api/user/self refuses %s (mass assignment) and changes nothing',
    async (field, value) => {
      const { agent, id } = await loggedInUser(account);
      const res = await agent.put('/api/user/self').send({ display_name: 'new', [field]: value });
      expectFailure(res, 400, 'invalid_request', new RegExp(field));
      const stored = await prisma.user.findUniqueOrThrow({ where: { id } });
      expect({ quota: stored.quota, role: stored.role, affQuota: stored.affQuota, displayName: stored.displayName, group: stored.group })
        .toEqual({ quota: 0n, role: 1, affQuota: 0n, displayName: '', group: 'default' });
    },
  );

  it('PUT /api/user/self changes display name and email; a password change needs the original', async () => {
    const { agent, username } = await loggedInUser(account);
    expect(expectOk(await agent.put('/api/user/self').send({ display_name: 'Zed', email: 'zed@example.com' })))
      .toMatchObject({ display_name: 'Zed', email: 'zed@example.com' });
    expectFailure(await agent.put('/api/user/self').send({ password: 'new-password-1' }), 400, 'invalid_request', /original_password/);
    expectFailure(await agent.put('/api/user/self').send({ password: 'new-password-1', original_password: 'wrong-one' }), 401, 'invalid_credentials');
    expectOk(await agent.put('/api/user/self').send({ password: 'new-password-1', original_password: TEST_PASSWORD }));
    await logIn(app, username, 'new-password-1');
    const old = await request(app).post('/api/user/login').send({ username, password: TEST_PASSWORD });
    expectFailure(old, 401, 'invalid_credentials');
  });

  it('a password change ends every other session of the user but keeps the one that made it', async () => {
    const { agent: laptop, username } = await loggedInUser(account);
    const { agent: phone } = await logIn(app, username);
    expectOk(await phone.get('/api/user/self'));
    expectOk(await laptop.put('/api/user/self').send({ password: 'new-password-1', original_password: TEST_PASSWORD }));
    expectFailure(await phone.get('/api/user/self'), 401, 'unauthorized', /password change/);
    expectOk(await laptop.get('/api/user/self'));
    const { agent: fresh } = await logIn(app, username, 'new-password-1');
    expectOk(await fresh.get('/api/user/self'));
  });

  it('a password change voids a pending 2FA login made with the old password', async () => {
    const owner = await loggedInUser(account);
    const setup = await enableTwoFactor(account, owner);
    const pending = await passwordStep(account, owner);
    expectOk(await owner.agent.put('/api/user/self').send({ password: 'new-password-1', original_password: TEST_PASSWORD }));
    const refused = await pending.post('/api/user/login/2fa').send({ code: totpAt(setup.secret, account.clock) });
    expectFailure(refused, 401, 'unauthorized', /password changed/);
    expectFailure(await pending.get('/api/user/self'), 401, 'unauthorized');
    // The right code was not spent on the refused attempt: a login with the new password can use it.
    const fresh = await passwordStep(account, { ...owner, password: 'new-password-1' });
    expectOk(await fresh.post('/api/user/login/2fa').send({ code: totpAt(setup.secret, account.clock) }));
    expectOk(await fresh.get('/api/user/self'));
  });

  it('a password change ends the access token', async () => {
    const { agent, id } = await loggedInUser(account);
    const token = expectOk(await agent.get('/api/user/token')) as string;
    const withToken = () => request(app).get('/api/user/self').set('Authorization', `Bearer ${token}`).set('New-Api-User', String(id));
    await withToken().expect(200);
    expectOk(await agent.put('/api/user/self').send({ password: 'new-password-1', original_password: TEST_PASSWORD }));
    expectFailure(await withToken(), 401, 'unauthorized');
    expect((await prisma.user.findUniqueOrThrow({ where: { id } })).accessTokenHash).toBeNull();
    const renewed = expectOk(await agent.get('/api/user/token')) as string;
    await request(app).get('/api/user/self').set('Authorization', `Bearer ${renewed}`).set('New-Api-User', String(id)).expect(200);
  });

  it('PUT /api/user/self refuses an email another user has with 409', async () => {
    await createUser(prisma, { email: 'taken@example.com' });
    const { agent } = await loggedInUser(account);
    expectFailure(await agent.put('/api/user/self').send({ email: 'taken@example.com' }), 409, 'conflict');
  });
});
