// Password reset end to end: the account service queues the mail, the worker (its own process)
// sends it to a real SMTP server, and the link in it sets a new password once.
import { createUser, TEST_PASSWORD } from '@modelgate/testing';
import request from 'supertest';
import { createAccountApp } from '../src/app';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { configureMail, linksIn, type MailDelivery, SERVER_ADDRESS, startMailDelivery, unreachableMailQueue } from './support/mail';
import { logIn } from './support/users';

jest.setTimeout(60_000);

const account = createTestAccount();
const { app, prisma } = account;
let mail: MailDelivery;

const NEW_PASSWORD = 'a-brand-new-password';

beforeAll(async () => {
  mail = await startMailDelivery();
}, 60_000);
beforeEach(async () => {
  await account.reset();
  await configureMail(account, mail.sink);
});
afterAll(async () => {
  await mail?.stop();
  await account.close();
});

function askForReset(email: string, address = '198.51.100.1') {
  return request(app).post('/api/user/reset_password').set('X-Forwarded-For', address).send({ email });
}

function reset(body: { email: string; token: string; password: string }) {
  return request(app).post('/api/user/reset').send(body);
}

/** Asks for a reset of `email` and returns the link and its token from the mail that arrives. */
async function resetLink(email: string): Promise<{ link: string; token: string }> {
  expectOk(await askForReset(email));
  const received = await mail.nextMailTo(email);
  const [link = ''] = linksIn(received);
  return { link, token: new URL(link).searchParams.get('token') ?? '' };
}

describe('POST /api/user/reset_password and POST /api/user/reset', () => {
  it('mails a link to the reset page at ServerAddress; the link sets the password once and ends every session', async () => {
    const user = await createUser(prisma, { username: 'alice', email: 'alice@example.com' });
    const session = await logIn(app, 'alice');
    await prisma.user.update({ where: { id: user.id }, data: { accessTokenHash: 'a'.repeat(64) } });

    expect(expectOk(await askForReset('alice@example.com'))).toBeNull();
    const received = await mail.nextMailTo('alice@example.com');
    expect(received.subject).toBe('Reset your Modelgate password');
    expect(received.from).toBe('noreply@gateway.example.com');
    expect(received.text).toMatch(/alice/);
    expect(received.text).toMatch(/15 minutes/);
    const links = linksIn(received);
    expect(links).toHaveLength(1);
    const link = new URL(links[0]!);
    expect(links[0]!.startsWith(`${SERVER_ADDRESS}/reset?`)).toBe(true);
    expect(link.searchParams.get('email')).toBe('alice@example.com');
    const token = link.searchParams.get('token')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43,}$/);

    expectOk(await reset({ email: 'alice@example.com', token, password: NEW_PASSWORD }));
    expectFailure(await session.agent.get('/api/user/self'), 401, 'unauthorized');
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).accessTokenHash).toBeNull();
    expectFailure(await request(app).post('/api/user/login').send({ username: 'alice', password: TEST_PASSWORD }), 401, 'invalid_credentials');
    expectOk(await request(app).post('/api/user/login').send({ username: 'alice', password: NEW_PASSWORD }));

    const replay = await reset({ email: 'alice@example.com', token, password: 'yet-another-password' });
    expectFailure(replay, 400, 'invalid_request', /^token:/);
    expect(replay.body.message).not.toContain(token);
    expectOk(await request(app).post('/api/user/login').send({ username: 'alice', password: NEW_PASSWORD }));
  });

  it('refuses a replaced, forged, expired or someone else\'s token with 400, and a guess does not void the real one', async () => {
    await createUser(prisma, { username: 'bob', email: 'bob@example.com' });
    await createUser(prisma, { username: 'carol', email: 'carol@example.com' });
    const first = await resetLink('bob@example.com');
    const second = await resetLink('bob@example.com');

    expectFailure(await reset({ email: 'bob@example.com', token: first.token, password: NEW_PASSWORD }), 400, 'invalid_request', /token/);
    expectFailure(await reset({ email: 'bob@example.com', token: 'A'.repeat(43), password: NEW_PASSWORD }), 400, 'invalid_request', /token/);
    expectFailure(await reset({ email: 'carol@example.com', token: second.token, password: NEW_PASSWORD }), 400, 'invalid_request', /token/);
    expectFailure(await reset({ email: 'nobody@example.com', token: second.token, password: NEW_PASSWORD }), 400, 'invalid_request', /token/);
    // The guesses above left bob's link working.
    expectOk(await reset({ email: 'bob@example.com', token: second.token, password: NEW_PASSWORD }));

    const third = await resetLink('bob@example.com');
    account.clock.advance(15 * 60 * 1000 + 1000);
    expectFailure(await reset({ email: 'bob@example.com', token: third.token, password: 'too-late-password' }), 400, 'invalid_request', /expired/);
    expectOk(await request(app).post('/api/user/login').send({ username: 'bob', password: NEW_PASSWORD }));
  });

  it('holds a new password to the rules of registration (400 naming password), and keeps the token for a better one', async () => {
    await createUser(prisma, { username: 'dave', email: 'dave@example.com' });
    const { token } = await resetLink('dave@example.com');
    expectFailure(await reset({ email: 'dave@example.com', token, password: 'short' }), 400, 'invalid_request', /^password:/);
    expectOk(await reset({ email: 'dave@example.com', token, password: NEW_PASSWORD }));
  });

  it('finds the account whatever the case of the address typed', async () => {
    await createUser(prisma, { username: 'erin', email: 'erin@example.com' });
    expectOk(await askForReset('Erin@Example.COM'));
    const received = await mail.nextMailTo('erin@example.com');
    expect(new URL(linksIn(received)[0]!).searchParams.get('email')).toBe('erin@example.com');
  });

  it('answers an unknown or disabled account\'s address exactly like a known one, and mails it nothing', async () => {
    await createUser(prisma, { username: 'frank', email: 'frank@example.com' });
    await createUser(prisma, { username: 'grace', email: 'grace@example.com', status: 2 });
    const unknown = await askForReset('nobody@example.com');
    const disabled = await askForReset('grace@example.com');
    const known = await askForReset('frank@example.com');
    for (const res of [unknown, disabled]) {
      expect({ status: res.status, body: res.body }).toEqual({ status: known.status, body: known.body });
    }
    await mail.nextMailTo('frank@example.com');
    // Mail is sent in queue order: had the others been queued, they would have arrived by now.
    expect(mail.sink.mails.filter((m) => m.to.includes('nobody@example.com') || m.to.includes('grace@example.com'))).toEqual([]);
  });

  it('is rate limited per address mailed to and per client address: 429 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await askForReset('target@example.com', `198.51.100.${10 + i}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await askForReset('target@example.com', '198.51.100.99');
    expectFailure(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

    const fromOneAddress: number[] = [];
    for (let i = 0; i < 21; i++) fromOneAddress.push((await askForReset(`someone${i}@example.com`, '203.0.113.50')).status);
    expect(fromOneAddress).toEqual([...Array(20).fill(200), 429]);
    expectOk(await askForReset('someone-else@example.com', '203.0.113.51'));
  });

  it('answers 503 for every address alike while the mail queue cannot be reached', async () => {
    await createUser(prisma, { username: 'heidi', email: 'heidi@example.com' });
    const unreachable = unreachableMailQueue();
    try {
      const outage = createAccountApp({ ...account.deps, mailQueue: unreachable.queue });
      const known = await request(outage).post('/api/user/reset_password').send({ email: 'heidi@example.com' });
      const unknown = await request(outage).post('/api/user/reset_password').send({ email: 'nobody@example.com' });
      expectFailure(known, 503, 'service_unavailable');
      expect({ status: unknown.status, body: unknown.body }).toEqual({ status: known.status, body: known.body });
    } finally {
      await unreachable.close();
    }
  });

  it('never logs a reset token, in the account service or the worker', async () => {
    await createUser(prisma, { username: 'ivan', email: 'ivan@example.com' });
    const { token } = await resetLink('ivan@example.com');
    expectOk(await reset({ email: 'ivan@example.com', token, password: NEW_PASSWORD }));
    expect(mail.worker.output()).toMatch(/"msg":"mail sent"/);
    for (const log of [account.logLines.join(''), mail.worker.output()]) {
      expect(log).not.toContain(token);
      expect(log).not.toContain(encodeURIComponent(token));
      expect(log).not.toContain(NEW_PASSWORD);
    }
  });
});
