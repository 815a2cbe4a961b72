// Credentials in headers, cookies and query strings (access tokens, session cookies, API
// keys, Stripe signatures, passwords, TOTP codes, a database password) sent through the account
// service with every log line kept at level trace: none of them may appear in a line, and the
// access log ties each request to its id and, once logged in, its user.
import { createPrismaClient } from '@modelgate/db';
import { setOption } from '@modelgate/testing';
import { checkoutEvent, signStripePayload } from '@modelgate/testing/fake-stripe';
import request from 'supertest';
import { createAccountApp } from '../src/app';
import { createTestAccount } from './support/app';
import { expectOk } from './support/envelope';
import { totpAt } from './support/totp';
import { logIn } from './support/users';

const WEBHOOK_SECRET = 'whsec_redaction_SECRET_3f9e';
const DATABASE_PASSWORD = 'db-password-SECRET-81c2';
const QUERY_KEY = 'query-key-SECRET-6d0a';
const QUERY_TOKEN = 'query-token-SECRET-1b7e';

const account = createTestAccount();
const { app, prisma } = account;

afterAll(() => account.close());

type Line = Record<string, unknown>;

it('never logs a credential, and every access line carries the request id and the user once known', async () => {
  await account.reset();
  await setOption(prisma, 'StripeWebhookSecret', WEBHOOK_SECRET);
  const password = 'Redaction-Pa55word-SECRET';
  const wrongPassword = 'Wrong-Pa55word-SECRET';
  const registered = expectOk(await request(app).post('/api/user/register').send({ username: 'redacted', password })) as { id: number };
  expect((await request(app).post('/api/user/login').send({ username: 'redacted', password: wrongPassword })).status).toBe(401);

  const user = await logIn(app, 'redacted', password);
  const login = await request(app).post('/api/user/login').send({ username: 'redacted', password });
  const [sessionCookie = ''] = String(login.headers['set-cookie']).split(';');
  expect(sessionCookie).toMatch(/^session=.{16,}/);
  const cookieCall = await request(app).get('/api/user/self').set('Cookie', sessionCookie).set('New-Api-User', String(user.id));
  expect(cookieCall.status).toBe(200);

  const accessToken = expectOk(await user.agent.get('/api/user/token')) as string;
  const bearer = await request(app)
    .get(`/api/user/self?key=${QUERY_KEY}&access_token=${QUERY_TOKEN}`)
    .set('Authorization', `Bearer ${accessToken}`)
    .set('New-Api-User', String(user.id));
  expect(bearer.status).toBe(200);
  const badBearer = await request(app).get(`/api/user/self?token=${QUERY_TOKEN}`).set('Authorization', `Bearer ${accessToken}x`).set('New-Api-User', String(user.id));
  expect(badBearer.status).toBe(401);

  const apiKey = (expectOk(await user.agent.post('/api/token/').send({ name: 'redaction' })) as { key: string }).key;

  const setup = expectOk(await user.agent.post('/api/user/2fa/setup')) as { secret: string; backup_codes: string[] };
  const totp = totpAt(setup.secret, account.clock);
  expect((await user.agent.post('/api/user/2fa/enable').send({ code: totp })).status).toBe(200);
  const wrongCode = totp === '000000' ? '111111' : '000000';
  expect((await user.agent.post('/api/user/2fa/disable').send({ code: wrongCode })).status).toBe(401);

  const event = checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_redaction', paymentStatus: 'paid' });
  const signature = signStripePayload(event.payload, WEBHOOK_SECRET);
  const forged = signStripePayload(event.payload, 'whsec_forged_SECRET_aa11');
  for (const header of [signature, forged]) {
    await request(app).post('/api/stripe/webhook').set('Content-Type', 'application/json').set('Stripe-Signature', header).send(event.payload);
  }

  // A database that cannot be reached, its URL holding a password: the error lines must not show it.
  const deadPrisma = createPrismaClient({ databaseUrl: `postgresql://postgres:${DATABASE_PASSWORD}@127.0.0.1:1/modelgate` });
  try {
    const offline = createAccountApp({ ...account.deps, prisma: deadPrisma });
    const down = await request(offline).get('/api/user/self').set('Authorization', `Bearer ${accessToken}`).set('New-Api-User', String(user.id));
    expect(down.status).toBeGreaterThanOrEqual(500);
    await request(offline).post('/api/stripe/webhook').set('Content-Type', 'application/json').set('Stripe-Signature', signature).send(event.payload);
  } finally {
    await deadPrisma.$disconnect();
  }

  const secrets = [
    password,
    wrongPassword,
    sessionCookie.slice('session='.length),
    accessToken,
    apiKey,
    apiKey.slice(3),
    setup.secret,
    ...setup.backup_codes,
    totp,
    QUERY_KEY,
    QUERY_TOKEN,
    WEBHOOK_SECRET,
    // The signatures proper ('' if absent, which fails below: every text includes '').
    signature.split('v1=')[1] ?? '',
    forged.split('v1=')[1] ?? '',
    DATABASE_PASSWORD,
  ];
  const text = account.logLines.join('');
  for (const secret of secrets) expect({ secret, logged: text.includes(secret) }).toEqual({ secret, logged: false });
  expect(text).not.toMatch(/\n\s+at \S+ \(/);

  const lines = account.logLines.map((line) => JSON.parse(line) as Line);
  expect(lines.every((line) => line.service === 'account')).toBe(true);
  const access = lines.filter((line) => line.msg === 'request');
  for (const line of access) expect(line).toMatchObject({ requestId: expect.any(String), latencyMs: expect.any(Number), status: expect.any(Number) });
  const accessOf = (res: request.Response) => access.find((line) => line.requestId === res.headers['x-request-id']);
  expect(accessOf(cookieCall)).toMatchObject({ userId: registered.id, status: 200, path: '/api/user/self' });
  expect(accessOf(bearer)).toMatchObject({ userId: registered.id, path: '/api/user/self?key=[Redacted]&access_token=[Redacted]' });
  expect(accessOf(badBearer)).toMatchObject({ status: 401, path: '/api/user/self?token=[Redacted]' });
  expect(accessOf(badBearer)?.userId).toBeUndefined();
  expect(lines.find((line) => line.msg === 'stripe webhook rejected')).toMatchObject({ requestId: expect.any(String), reason: 'signature does not match' });
});
