import { createUser, setOption, TEST_PASSWORD } from '@modelgate/testing';
import { startTestIdentityProvider, type TestIdentityProvider } from '@modelgate/testing/oidc-provider';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { totpAt } from './support/totp';
import { enableTwoFactor } from './support/two-factor';
import { type Agent, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

/** The gateway's public address: the provider knows it as the redirect URI, whatever Host a request names. */
const SERVER_ADDRESS = 'https://gateway.example.test';
const CALLBACK = `${SERVER_ADDRESS}/api/oauth/oidc/callback`;
const NEW_USER_QUOTA = 5000;

let idp: TestIdentityProvider;

beforeAll(async () => {
  idp = await startTestIdentityProvider({ redirectUri: CALLBACK });
});
afterAll(async () => {
  await idp.close();
  await account.close();
});
beforeEach(async () => {
  await account.reset();
  idp.accounts.clear();
  idp.tamperIdTokens(undefined);
  await configureSso();
});

async function configureSso(overrides: Record<string, string | number | boolean> = {}): Promise<void> {
  const options = {
    ServerAddress: SERVER_ADDRESS,
    QuotaForNewUser: NEW_USER_QUOTA,
    OIDCEnabled: true,
    OIDCIssuer: idp.issuer,
    OIDCClientId: idp.clientId,
    OIDCClientSecret: idp.clientSecret,
    ...overrides,
  };
  for (const [key, value] of Object.entries(options)) await setOption(prisma, key, value);
}

const setCookies = (res: request.Response): string[] => ([] as string[]).concat(res.headers['set-cookie'] ?? []);
const cookieNamed = (res: request.Response, name: string) => setCookies(res).find((cookie) => cookie.startsWith(`${name}=`));
/** The `name=value` part of a Set-Cookie line, as a browser sends it back. */
const cookiePair = (setCookie: string) => setCookie.slice(0, (setCookie + ';').indexOf(';'));

/** A fresh browser opens the SSO link: its agent (holding the browser cookie) and where it was sent. */
async function startSignIn(next?: string): Promise<{ browser: Agent; authorizationUrl: URL; res: request.Response }> {
  const browser = request.agent(app);
  const res = await browser.get('/api/oauth/oidc/login').query(next === undefined ? {} : { next });
  expect(res.status).toBe(302);
  return { browser, authorizationUrl: new URL(res.headers.location as string), res };
}

/** The provider sends the browser to the registered redirect URI: the same path and query, asked of the gateway. */
function callbackPathOf(returnUrl: URL): string {
  expect(`${returnUrl.origin}${returnUrl.pathname}`).toBe(CALLBACK);
  return returnUrl.pathname + returnUrl.search;
}

/** The whole sign-in of `sub` in a fresh browser; the gateway's answer to the callback. */
async function signInAs(sub: string, next?: string): Promise<{ browser: Agent; res: request.Response }> {
  const { browser, authorizationUrl } = await startSignIn(next);
  const res = await browser.get(callbackPathOf(await idp.signIn(authorizationUrl.href, sub)));
  return { browser, res };
}

function expectRefused(res: request.Response, reason: string): void {
  expect({ status: res.status, location: res.headers.location }).toEqual({ status: 302, location: `${SERVER_ADDRESS}/login?error=${reason}` });
  expect(cookieNamed(res, 'session')).toBeUndefined();
}

async function expectSignedOut(browser: Agent): Promise<void> {
  expectFailure(await browser.get('/api/user/session'), 401, 'unauthorized');
}

describe('GET /api/status oidc_enabled', () => {
  it('is true only with OIDCEnabled, an issuer, a client id and a client secret', async () => {
    expect(expectOk(await request(app).get('/api/status'))).toMatchObject({ oidc_enabled: true });
    const incomplete: Record<string, string | boolean>[] = [{ OIDCEnabled: false }, { OIDCIssuer: '' }, { OIDCClientId: '' }, { OIDCClientSecret: '' }];
    for (const missing of incomplete) {
      await configureSso(missing);
      expect(expectOk(await request(app).get('/api/status'))).toMatchObject({ oidc_enabled: false });
    }
  });
});

describe('GET /api/oauth/oidc/login', () => {
  it('sends the browser to the provider: code flow, state, nonce, PKCE S256, the redirect URI of ServerAddress', async () => {
    const { authorizationUrl, res } = await startSignIn('/keys');
    expect(authorizationUrl.origin).toBe(idp.issuer);
    const params = Object.fromEntries(authorizationUrl.searchParams);
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: idp.clientId,
      redirect_uri: CALLBACK,
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(params.state).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(params.nonce).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookieNamed(res, 'oidc_browser')).toMatch(/HttpOnly/);
    expect(cookieNamed(res, 'oidc_browser')).toMatch(/SameSite=Lax/);
    expect(res.headers['cache-control']).toBe('no-store');

    // Another Host or X-Forwarded-Host changes nothing: the address is the option's.
    const spoofed = await request(app).get('/api/oauth/oidc/login').set('Host', 'evil.example').set('X-Forwarded-Host', 'evil.example');
    expect(new URL(spoofed.headers.location as string).searchParams.get('redirect_uri')).toBe(CALLBACK);
    // Each start has its own state and nonce.
    const again = (await startSignIn()).authorizationUrl.searchParams;
    expect(again.get('state')).not.toBe(params.state);
    expect(again.get('nonce')).not.toBe(params.nonce);
  });

  it('sends the browser to /login?error when SSO is off or the provider cannot be discovered', async () => {
    await configureSso({ OIDCEnabled: false });
    expectRefused(await request(app).get('/api/oauth/oidc/login'), 'sso_disabled');
    await configureSso({ OIDCIssuer: 'http://127.0.0.1:9' });
    expectRefused(await request(app).get('/api/oauth/oidc/login'), 'sso_unavailable');
    // Tokens and the client secret never travel over plain http to another machine.
    await configureSso({ OIDCIssuer: 'http://idp.example.com' });
    expectRefused(await request(app).get('/api/oauth/oidc/login'), 'sso_unavailable');
    await configureSso();
    expect((await request(app).get('/api/oauth/oidc/login')).headers.location).toMatch(new RegExp(`^${idp.issuer}/`));
  });
});

describe('signing in through the provider', () => {
  it('creates the user on the first sign-in (QuotaForNewUser with one log row) and finds it on the next', async () => {
    idp.accounts.set('sub-alice', { preferred_username: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice Liddell' });
    const first = await signInAs('sub-alice', '/keys?p=2');
    expect(first.res.status).toBe(302);
    expect(first.res.headers.location).toBe(`${SERVER_ADDRESS}/keys?p=2`);
    expect(cookieNamed(first.res, 'session')).toMatch(/HttpOnly/);
    const session = expectOk(await first.browser.get('/api/user/session')) as { id: number };
    expect(session).toEqual({ id: expect.any(Number), username: 'alice', role: ROLE.user });

    const self = expectOk(await first.browser.get('/api/user/self').set('New-Api-User', String(session.id)));
    expect(self).toMatchObject({ username: 'alice', display_name: 'Alice Liddell', email: 'alice@example.com', quota: NEW_USER_QUOTA });
    const logs = await prisma.log.findMany({ where: { userId: session.id } });
    expect(logs).toEqual([expect.objectContaining({ type: 4, quota: BigInt(NEW_USER_QUOTA) })]);
    expect(await prisma.userIdentity.findMany({ select: { userId: true, issuer: true, subject: true } })).toEqual([
      { userId: session.id, issuer: idp.issuer, subject: 'sub-alice' },
    ]);

    // The provider renamed the account: it is still found by (issuer, sub), nothing new is made.
    idp.accounts.set('sub-alice', { preferred_username: 'alice_renamed', email: 'new@example.com', email_verified: true });
    const second = await signInAs('sub-alice');
    expect(second.res.headers.location).toBe(`${SERVER_ADDRESS}/`);
    expect(expectOk(await second.browser.get('/api/user/session'))).toEqual({ id: session.id, username: 'alice', role: ROLE.user });
    expect(await prisma.user.count()).toBe(1);
    expect(await prisma.log.count()).toBe(1);
  });

  it('makes a taken username unique, keeps only a verified and free email, and sanitises names', async () => {
    await createUser(prisma, { username: 'bob', email: 'bob@example.com' });
    idp.accounts.set('sub-bob', { preferred_username: 'bob', email: 'BOB@example.com', email_verified: true });
    idp.accounts.set('sub-carol', { preferred_username: 'carol.smith@corp.example', email: 'carol@corp.example', email_verified: false });
    idp.accounts.set('sub-jose', { preferred_username: 'José María', email: 'jose@example.com', email_verified: true });
    idp.accounts.set('sub-x', { preferred_username: 'x' });

    const created = async (sub: string) => {
      const { res, browser } = await signInAs(sub);
      expect(res.headers.location).toBe(`${SERVER_ADDRESS}/`);
      const { id } = expectOk(await browser.get('/api/user/session')) as { id: number };
      return prisma.user.findUniqueOrThrow({ where: { id }, select: { username: true, email: true } });
    };
    const bob = await created('sub-bob');
    expect(bob.username).toMatch(/^bob_[0-9]{4}$/);
    expect(bob.email).toBeNull();
    expect(await created('sub-carol')).toEqual({ username: 'carol_smith', email: null });
    expect(await created('sub-jose')).toEqual({ username: 'Jose_Maria', email: 'jose@example.com' });
    expect(await created('sub-x')).toEqual({ username: 'user', email: null });
  });

  it('gives a user with two-factor on the second step before the session counts', async () => {
    idp.accounts.set('sub-dora', { preferred_username: 'dora' });
    const first = await signInAs('sub-dora');
    const { id } = expectOk(await first.browser.get('/api/user/session')) as { id: number };
    first.browser.set('New-Api-User', String(id));
    const { secret } = await enableTwoFactor(account, { agent: first.browser, id, username: 'dora', password: '' });

    const { browser, res } = await signInAs('sub-dora', '/usage');
    expect(res.headers.location).toBe(`${SERVER_ADDRESS}/sign-in?step=2fa&next=%2Fusage`);
    await expectSignedOut(browser);
    expectFailure(await browser.post('/api/user/login/2fa').send({ code: '000000' }), 401, 'invalid_credentials');
    expect(expectOk(await browser.post('/api/user/login/2fa').send({ code: totpAt(secret, account.clock) }))).toMatchObject({ id, username: 'dora' });
    expect(expectOk(await browser.get('/api/user/session'))).toEqual({ id, username: 'dora', role: ROLE.user });
  });

  it('refuses a disabled or deleted user', async () => {
    idp.accounts.set('sub-eve', { preferred_username: 'eve' });
    const { browser } = await signInAs('sub-eve');
    const { id } = expectOk(await browser.get('/api/user/session')) as { id: number };
    await prisma.user.update({ where: { id }, data: { status: 2 } });
    const disabled = await signInAs('sub-eve');
    expectRefused(disabled.res, 'user_disabled');
    await expectSignedOut(disabled.browser);
    await prisma.user.update({ where: { id }, data: { status: 1, deletedAt: new Date() } });
    expectRefused((await signInAs('sub-eve')).res, 'user_disabled');
    expect(await prisma.user.count()).toBe(1);
  });

  it('lands on / for a next that is not a local path', async () => {
    idp.accounts.set('sub-fay', { preferred_username: 'fay' });
    for (const next of ['//evil.example/x', 'https://evil.example', '/\\evil.example', 'keys', '/a b']) {
      expect((await signInAs('sub-fay', next)).res.headers.location).toBe(`${SERVER_ADDRESS}/`);
    }
  });

  it('follows changed options: a wrong client secret fails, the right one works again', async () => {
    idp.accounts.set('sub-gil', { preferred_username: 'gil' });
    expect((await signInAs('sub-gil')).res.headers.location).toBe(`${SERVER_ADDRESS}/`);
    await configureSso({ OIDCClientSecret: 'not-the-secret' });
    expectRefused((await signInAs('sub-gil')).res, 'invalid_token');
    await configureSso();
    expect((await signInAs('sub-gil')).res.headers.location).toBe(`${SERVER_ADDRESS}/`);
  });
});

describe('what signs nobody in', () => {
  beforeEach(() => {
    idp.accounts.set('sub-mallory', { preferred_username: 'mallory', email: 'm@example.com', email_verified: true });
  });

  it('a forged state, or none', async () => {
    const { browser, authorizationUrl } = await startSignIn();
    const back = await idp.signIn(authorizationUrl.href, 'sub-mallory');
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state-value-forged-state-value');
    expectRefused(await browser.get(callbackPathOf(forged)), 'invalid_state');
    expectRefused(await browser.get('/api/oauth/oidc/callback'), 'invalid_state');
    await expectSignedOut(browser);
    expect(await prisma.user.count()).toBe(0);
  });

  it('a replayed state, even with the browser cookie it was issued with', async () => {
    const { browser, authorizationUrl, res } = await startSignIn();
    const path = callbackPathOf(await idp.signIn(authorizationUrl.href, 'sub-mallory'));
    const browserCookie = cookiePair(cookieNamed(res, 'oidc_browser') ?? '');
    expect((await browser.get(path)).headers.location).toBe(`${SERVER_ADDRESS}/`);
    const replay = await request(app).get(path).set('Cookie', browserCookie);
    expectRefused(replay, 'invalid_state');
    expect(await prisma.user.count()).toBe(1);
  });

  it('a state started in another browser (login CSRF): without its cookie, or with another one', async () => {
    const attacker = await startSignIn();
    const attackerPath = callbackPathOf(await idp.signIn(attacker.authorizationUrl.href, 'sub-mallory'));
    const victim = await startSignIn();
    expectRefused(await victim.browser.get(attackerPath), 'invalid_state');
    await expectSignedOut(victim.browser);
    expectRefused(await request(app).get(attackerPath), 'invalid_state');
    // The state was used up by the first try: not even the browser that started it gets in now.
    expectRefused(await attacker.browser.get(attackerPath), 'invalid_state');
    expect(await prisma.user.count()).toBe(0);
  });

  it('an error from the provider (the user cancelled, or another error)', async () => {
    const { browser, authorizationUrl } = await startSignIn();
    const back = await idp.signIn(authorizationUrl.href, 'sub-mallory', { cancel: true });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expectRefused(await browser.get(callbackPathOf(back)), 'access_denied');

    const other = await startSignIn();
    const state = other.authorizationUrl.searchParams.get('state') ?? '';
    expectRefused(await other.browser.get('/api/oauth/oidc/callback').query({ error: 'server_error', state }), 'provider_error');
    await expectSignedOut(other.browser);
    expect(await prisma.user.count()).toBe(0);
  });

  it('an ID token for another client, with another nonce, or signed with another key', async () => {
    const tamperings = [
      { claims: (claims: Record<string, unknown>) => ({ ...claims, aud: 'another-client' }) },
      { claims: (claims: Record<string, unknown>) => ({ ...claims, nonce: 'another-nonce' }) },
      { claims: (claims: Record<string, unknown>) => ({ ...claims, iss: 'https://another-issuer.example' }) },
      { claims: (claims: Record<string, unknown>) => ({ ...claims, exp: Math.floor(Date.now() / 1000) - 3600 }) },
      { signedBy: 'another-key' as const },
    ];
    for (const tampering of tamperings) {
      idp.tamperIdTokens(tampering);
      const { browser, res } = await signInAs('sub-mallory');
      expectRefused(res, 'invalid_token');
      await expectSignedOut(browser);
    }
    expect(await prisma.user.count()).toBe(0);
    // The untouched token still works, and the log holds no secret or token.
    idp.tamperIdTokens(undefined);
    const { browser, authorizationUrl } = await startSignIn();
    const back = await idp.signIn(authorizationUrl.href, 'sub-mallory');
    expect((await browser.get(callbackPathOf(back))).headers.location).toBe(`${SERVER_ADDRESS}/`);
    const log = account.logLines.join('\n');
    expect(log).toContain('OpenID Connect sign-in refused');
    expect(log).not.toContain(idp.clientSecret);
    expect(log).not.toContain(back.searchParams.get('code'));
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}\./);
    expect(log).not.toMatch(/\n\s+at /);
  });
});

describe('GET /api/user/session', () => {
  it('answers {id, username, role} for the session cookie alone (no New-Api-User), 401 without a full session', async () => {
    const user = await createUser(prisma, { username: 'heidi', role: ROLE.admin });
    const login = await request(app).post('/api/user/login').send({ username: 'heidi', password: TEST_PASSWORD });
    const cookie = cookiePair(cookieNamed(login, 'session') ?? '');
    const session = () => request(app).get('/api/user/session').set('Cookie', cookie);
    expect(expectOk(await session())).toEqual({ id: user.id, username: 'heidi', role: ROLE.admin });

    expectFailure(await request(app).get('/api/user/session'), 401, 'unauthorized');
    expectFailure(await request(app).get('/api/user/session').set('Cookie', 'session=forged.value'), 401, 'unauthorized');
    await prisma.user.update({ where: { id: user.id }, data: { status: 2 } });
    expectFailure(await session(), 403, 'user_disabled');
    await prisma.user.update({ where: { id: user.id }, data: { status: 1 } });
    expectOk(await request(app).post('/api/user/logout').set('Cookie', cookie));
    expectFailure(await session(), 401, 'unauthorized');
  });
});

describe('GET /api/openapi.json', () => {
  it('lists the sign-in redirects (302 only) and the cookie-only session route', async () => {
    const { paths } = (await request(app).get('/api/openapi.json')).body;
    for (const path of ['/api/oauth/oidc/login', '/api/oauth/oidc/callback']) {
      expect(Object.keys(paths[path].get.responses)).toEqual(['302']);
      expect(paths[path].get.security).toEqual([]);
    }
    expect(paths['/api/oauth/oidc/login'].get.parameters).toEqual([expect.objectContaining({ name: 'next', in: 'query', required: false })]);
    expect(paths['/api/user/session'].get.security).toEqual([{ sessionCookie: [] }]);
    expect(paths['/api/user/session'].get.responses['401']).toEqual({ $ref: '#/components/responses/Error401' });
  });
});
