import { decryptSecret } from '@modelgate/db';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { TOTP_STEP_MS, totpAt } from './support/totp';
import { enableTwoFactor, passwordStep, type TwoFactorSetup } from './support/two-factor';
import { logIn, loggedInUser } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

describe('setup and enable', () => {
  it('returns a base32 secret, an otpauth URI and 4 backup codes; enables with a TOTP', async () => {
    const user = await loggedInUser(account);
    const setup = expectOk(await user.agent.post('/api/user/2fa/setup')) as TwoFactorSetup;
    expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setup.qr_code_data).toMatch(/^otpauth:\/\/totp\//);
    const uri = new URL(setup.qr_code_data);
    expect(uri.searchParams.get('secret')).toBe(setup.secret);
    expect(uri.searchParams.get('issuer')).toBe('Modelgate');
    expect(setup.backup_codes).toHaveLength(4);
    for (const code of setup.backup_codes) expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(expectOk(await user.agent.get('/api/user/2fa/status'))).toEqual({ enabled: false, locked: false, backup_codes_remaining: 0 });

    expectFailure(await user.agent.post('/api/user/2fa/enable').send({ code: '000000' }), 401, 'invalid_credentials');
    expectOk(await user.agent.post('/api/user/2fa/enable').send({ code: totpAt(setup.secret, account.clock) }));
    expect(expectOk(await user.agent.get('/api/user/2fa/status'))).toEqual({ enabled: true, locked: false, backup_codes_remaining: 4 });
    expect(expectOk(await user.agent.get('/api/user/self'))).toMatchObject({ two_factor_enabled: true });

    // At rest: the secret is encrypted, backup codes are hashed.
    const row = await prisma.twoFactor.findUniqueOrThrow({ where: { userId: user.id } });
    expect(row.secretEnc).not.toContain(setup.secret);
    expect(decryptSecret(row.secretEnc, account.deps.env.CRYPTO_SECRET)).toBe(setup.secret);
    const codes = await prisma.backupCode.findMany({ where: { userId: user.id } });
    for (const code of setup.backup_codes) {
      expect(codes.some((stored) => stored.codeHash.includes(code.replace('-', '')))).toBe(false);
    }
  });

  it('refuses setup while enabled, and enable without setup', async () => {
    const user = await loggedInUser(account);
    expectFailure(await user.agent.post('/api/user/2fa/enable').send({ code: '123456' }), 400, 'invalid_request');
    await enableTwoFactor(account, user);
    expectFailure(await user.agent.post('/api/user/2fa/setup'), 409, 'conflict');
  });

  it('requires a logged-in user', async () => {
    expectFailure(await request(app).post('/api/user/2fa/setup'), 401, 'unauthorized');
    expectFailure(await request(app).get('/api/user/2fa/status'), 401, 'unauthorized');
  });
});

describe('login with two factors', () => {
  it('holds a pending login that is not logged in, then upgrades it with a TOTP and a new session id', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    const agent = await passwordStep(account, user);
    expectFailure(await agent.get('/api/user/self'), 401, 'unauthorized');
    const res = await agent.post('/api/user/login/2fa').send({ code: totpAt(secret, account.clock) });
    expect(expectOk(res)).toMatchObject({ id: user.id, username: user.username, role: 1, status: 1 });
    expect(String(res.headers['set-cookie'])).toMatch(/session=/);
    expect(expectOk(await agent.get('/api/user/self'))).toMatchObject({ id: user.id });
  });

  it('answers 401 without a pending login', async () => {
    expectFailure(await request(app).post('/api/user/login/2fa').send({ code: '123456' }), 401, 'unauthorized');
  });

  it('lets the pending login expire after 5 minutes', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    const agent = await passwordStep(account, user);
    account.clock.advance(5 * 60 * 1000 + 1000);
    const res = await agent.post('/api/user/login/2fa').send({ code: totpAt(secret, account.clock) });
    expectFailure(res, 401, 'unauthorized', /expired/);
    expectFailure(await agent.get('/api/user/self'), 401, 'unauthorized');
  });

  it('never accepts a TOTP step twice (sequential replay)', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    const code = totpAt(secret, account.clock);
    expectOk(await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code }));
    const replay = await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code });
    expectFailure(replay, 401, 'invalid_credentials');
    // Nor an older step inside the window once a newer one was used.
    account.clock.advance(TOTP_STEP_MS);
    const newer = totpAt(secret, account.clock);
    expectOk(await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code: newer }));
    expectFailure(await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code }), 401, 'invalid_credentials');
  });

  it('accepts one code exactly once among 10 concurrent uses', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    const agents = await Promise.all(Array.from({ length: 10 }, () => passwordStep(account, user)));
    const code = totpAt(secret, account.clock);
    const results = await Promise.all(agents.map((agent) => agent.post('/api/user/login/2fa').send({ code })));
    expect(results.filter((res) => res.status === 200)).toHaveLength(1);
    expect(results.every((res) => res.status === 200 || res.status === 401 || res.status === 429)).toBe(true);
  });

  it('locks after exactly 5 failures under 20 concurrent wrong codes, then answers 429 even for a right code', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    const agents = await Promise.all(Array.from({ length: 20 }, () => passwordStep(account, user)));
    const right = totpAt(secret, account.clock);
    const wrong = right === '000000' ? '111111' : '000000';
    const results = await Promise.all(agents.map((agent) => agent.post('/api/user/login/2fa').send({ code: wrong })));
    const statuses = results.map((res) => res.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    const stored = await prisma.twoFactor.findUniqueOrThrow({ where: { userId: user.id } });
    expect(stored.failedAttempts).toBe(5);

    const [lockedOut] = agents;
    if (!lockedOut) throw new Error('no login in progress');
    const locked = await lockedOut.post('/api/user/login/2fa').send({ code: right });
    expectFailure(locked, 429, 'two_factor_locked');
    const retryAfter = Number(locked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(240);
    expect(retryAfter).toBeLessThanOrEqual(300);
    expect(expectOk(await user.agent.get('/api/user/2fa/status'))).toMatchObject({ locked: true });
    // Disabling goes through the same lock.
    expectFailure(await user.agent.post('/api/user/2fa/disable').send({ code: right }), 429, 'two_factor_locked');

    account.clock.advance(5 * 60 * 1000 + 1000);
    const fresh = await passwordStep(account, user);
    expectOk(await fresh.post('/api/user/login/2fa').send({ code: totpAt(secret, account.clock) }));
    expect(expectOk(await user.agent.get('/api/user/2fa/status'))).toMatchObject({ locked: false });
  });

  it('makes each further lockout twice as long, up to a day, and starts over a day after the last one or after a right code', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    const check = (code: string) => user.agent.post('/api/user/2fa/backup_codes').send({ code });
    /** Five wrong codes, then a right one: the lockout's Retry-After, in seconds. */
    async function lockOut(): Promise<number> {
      for (let i = 0; i < 5; i++) {
        const right = totpAt(secret, account.clock);
        expectFailure(await check(right === '000000' ? '111111' : '000000'), 401, 'invalid_credentials');
      }
      const locked = await check(totpAt(secret, account.clock));
      expectFailure(locked, 429, 'two_factor_locked');
      return Number(locked.headers['retry-after']);
    }
    const minutes = [5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440, 1440];
    for (const expected of minutes) {
      const retryAfter = await lockOut();
      expect(retryAfter).toBeGreaterThan(expected * 60 - 5);
      expect(retryAfter).toBeLessThanOrEqual(expected * 60);
      account.clock.advance(retryAfter * 1000 + 1000);
    }
    // A day after the last lockout ended, the next one is short again.
    account.clock.advance(24 * 60 * 60 * 1000);
    expect(await lockOut()).toBeGreaterThan(295);
    account.clock.advance(5 * 60 * 1000 + 1000);
    expect(await lockOut()).toBeGreaterThan(595);
    // A right code ends the streak.
    account.clock.advance(10 * 60 * 1000 + 1000);
    expectOk(await check(totpAt(secret, account.clock)));
    account.clock.advance(TOTP_STEP_MS);
    const afterRightCode = await lockOut();
    expect(afterRightCode).toBeGreaterThan(295);
    expect(afterRightCode).toBeLessThanOrEqual(300);
  });

  it('accepts each backup code once, ignoring case and hyphens', async () => {
    const user = await loggedInUser(account);
    const { backup_codes: codes } = await enableTwoFactor(account, user);
    const [code] = codes;
    if (code === undefined) throw new Error('no backup code issued');
    const sloppy = code.replace('-', '').toLowerCase();
    expectOk(await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code: sloppy }));
    expectFailure(await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code }), 401, 'invalid_credentials');
    expect(expectOk(await user.agent.get('/api/user/2fa/status'))).toMatchObject({ backup_codes_remaining: 3 });
    // Concurrent uses of one code: one success.
    const agents = await Promise.all(Array.from({ length: 3 }, () => passwordStep(account, user)));
    const results = await Promise.all(agents.map((agent) => agent.post('/api/user/login/2fa').send({ code: codes[1] })));
    expect(results.filter((res) => res.status === 200)).toHaveLength(1);
  });

  it('refuses a user disabled between the two steps', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    const agent = await passwordStep(account, user);
    await prisma.user.update({ where: { id: user.id }, data: { status: 2 } });
    expectFailure(await agent.post('/api/user/login/2fa').send({ code: totpAt(secret, account.clock) }), 403, 'user_disabled');
  });
});

describe('disable and backup code renewal', () => {
  it('disables with a TOTP, removing the secret and the backup codes', async () => {
    const user = await loggedInUser(account);
    const { secret } = await enableTwoFactor(account, user);
    expectFailure(await user.agent.post('/api/user/2fa/disable').send({ code: '12345' }), 401, 'invalid_credentials');
    expectOk(await user.agent.post('/api/user/2fa/disable').send({ code: totpAt(secret, account.clock) }));
    expect(await prisma.twoFactor.count({ where: { userId: user.id } })).toBe(0);
    expect(await prisma.backupCode.count({ where: { userId: user.id } })).toBe(0);
    expect(expectOk(await logIn(app, user.username).then((u) => u.agent.get('/api/user/2fa/status')))).toEqual({
      enabled: false,
      locked: false,
      backup_codes_remaining: 0,
    });
    expectFailure(await user.agent.post('/api/user/2fa/disable').send({ code: '123456' }), 400, 'invalid_request');
  });

  it('disables with a backup code', async () => {
    const user = await loggedInUser(account);
    const { backup_codes: codes } = await enableTwoFactor(account, user);
    expectOk(await user.agent.post('/api/user/2fa/disable').send({ code: codes[3] }));
    await logIn(app, user.username);
  });

  it('renews backup codes with a TOTP only; the old codes stop working', async () => {
    const user = await loggedInUser(account);
    const { secret, backup_codes: oldCodes } = await enableTwoFactor(account, user);
    expectFailure(await user.agent.post('/api/user/2fa/backup_codes').send({ code: oldCodes[0] }), 401, 'invalid_credentials');
    const renewed = expectOk(await user.agent.post('/api/user/2fa/backup_codes').send({ code: totpAt(secret, account.clock) })) as {
      backup_codes: string[];
    };
    expect(renewed.backup_codes).toHaveLength(4);
    expect(renewed.backup_codes).not.toEqual(expect.arrayContaining([oldCodes[1]]));
    expectFailure(await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code: oldCodes[1] }), 401, 'invalid_credentials');
    expectOk(await (await passwordStep(account, user)).post('/api/user/login/2fa').send({ code: renewed.backup_codes[0] }));
  });

  it("keeps each user's second factor to themselves (BOLA)", async () => {
    const alice = await loggedInUser(account);
    const bob = await loggedInUser(account);
    const aliceSetup = await enableTwoFactor(account, alice);
    // Bob's calls only ever address Bob's own 2FA: Alice's codes do nothing for or against her.
    expect(expectOk(await bob.agent.get('/api/user/2fa/status'))).toEqual({ enabled: false, locked: false, backup_codes_remaining: 0 });
    expectFailure(await bob.agent.post('/api/user/2fa/disable').send({ code: totpAt(aliceSetup.secret, account.clock) }), 400, 'invalid_request');
    expectFailure(await bob.agent.post('/api/user/2fa/disable').send({ code: aliceSetup.backup_codes[0] }), 400, 'invalid_request');
    expectFailure(await bob.agent.post('/api/user/2fa/backup_codes').send({ code: totpAt(aliceSetup.secret, account.clock) }), 400, 'invalid_request');
    const bobSetup = expectOk(await bob.agent.post('/api/user/2fa/setup')) as TwoFactorSetup;
    expect(bobSetup.secret).not.toBe(aliceSetup.secret);
    expectFailure(await bob.agent.post('/api/user/2fa/enable').send({ code: totpAt(aliceSetup.secret, account.clock) }), 401, 'invalid_credentials');
    expect(expectOk(await alice.agent.get('/api/user/2fa/status'))).toEqual({ enabled: true, locked: false, backup_codes_remaining: 4 });
  });

  it('rejects unknown fields in code bodies', async () => {
    const user = await loggedInUser(account);
    expectFailure(await user.agent.post('/api/user/2fa/enable').send({ code: '123456', user_id: 1 }), 400, 'invalid_request', /user_id/);
  });
});
