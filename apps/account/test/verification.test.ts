// Email verification at registration: the code is mailed through the real queue, worker process
// and SMTP server; it works once, for 10 minutes, and not after five wrong guesses. Also: the
// status flags the console reads, and admins setting a user's (unique) email.
import { createUser, setOption } from '@modelgate/testing';
import request from 'supertest';
import { createAccountApp } from '../src/app';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { configureMail, linksIn, type MailDelivery, SERVER_ADDRESS, startMailDelivery, unreachableMailQueue } from './support/mail';
import { loggedInUser, ROLE } from './support/users';

jest.setTimeout(60_000);

const account = createTestAccount();
const { app, prisma } = account;
let mail: MailDelivery;

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

function askForCode(email: string, address = '198.51.100.1') {
  return request(app).post('/api/verification').set('X-Forwarded-For', address).send({ email });
}

function register(body: Record<string, unknown>, address = '198.51.100.1') {
  return request(app).post('/api/user/register').set('X-Forwarded-For', address).send({ password: 'pa55word!', ...body });
}

/** Asks for a code for `email` and reads it from the mail that arrives. */
async function mailedCode(email: string): Promise<string> {
  expectOk(await askForCode(email));
  const received = await mail.nextMailTo(email);
  const code = /\b(\d{6})\b/.exec(received.text)?.[1];
  if (!code) throw new Error(`no code in the mail: ${received.text}`);
  return code;
}

/** A code other than `code`. */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('GET /api/status', () => {
  it('tells whether registration needs a verified email and whether mail is set up', async () => {
    expect(expectOk(await request(app).get('/api/status'))).toMatchObject({ email_verification: false, smtp_enabled: true });
    await setOption(prisma, 'EmailVerificationEnabled', 'true');
    await setOption(prisma, 'SMTPServer', '');
    expect(expectOk(await request(app).get('/api/status'))).toMatchObject({ email_verification: true, smtp_enabled: false });
  });
});

describe('with EmailVerificationEnabled', () => {
  beforeEach(() => setOption(prisma, 'EmailVerificationEnabled', 'true'));

  it('registration needs the email and the code mailed to it; the code works once', async () => {
    expectFailure(await register({ username: 'alice' }), 400, 'invalid_request', /^email:/);
    expect((await register({ username: 'alice', email: 'alice@example.com' })).body).toMatchObject({ success: false, message: expect.stringMatching(/^verification_code:/) });

    expect(expectOk(await askForCode('alice@example.com'))).toBeNull();
    const received = await mail.nextMailTo('alice@example.com');
    expect(received.subject).toBe('Your Modelgate verification code');
    expect(received.subject).not.toMatch(/\d/);
    expect(linksIn(received).every((link) => link.startsWith(`${SERVER_ADDRESS}/`))).toBe(true);
    expect(received.text).toMatch(/10 minutes/);
    const code = /\b(\d{6})\b/.exec(received.text)![1]!;

    expectFailure(await register({ username: 'alice', email: 'alice@example.com', verification_code: wrong(code) }), 400, 'invalid_request', /^verification_code:/);
    const created = expectOk(await register({ username: 'alice', email: 'alice@example.com', verification_code: code })) as { id: number };
    expect((await prisma.user.findUniqueOrThrow({ where: { id: created.id } })).email).toBe('alice@example.com');

    // The address freed again: the used code still does not work.
    await prisma.user.update({ where: { id: created.id }, data: { email: null } });
    expectFailure(await register({ username: 'alice2', email: 'alice@example.com', verification_code: code }), 400, 'invalid_request', /^verification_code:/);
  });

  it('a code survives four wrong guesses, and the fifth voids it', async () => {
    const code = await mailedCode('bob@example.com');
    for (let i = 0; i < 4; i++) {
      expectFailure(await register({ username: `bob_${i}`, email: 'bob@example.com', verification_code: wrong(code) }), 400, 'invalid_request', /verification_code/);
    }
    expectOk(await register({ username: 'bob', email: 'bob@example.com', verification_code: code }));

    // From another address: registrations are limited to 10 an hour per address.
    const next = await mailedCode('carol@example.com');
    const elsewhere = '198.51.100.2';
    for (let i = 0; i < 5; i++) {
      expectFailure(await register({ username: `carol_${i}`, email: 'carol@example.com', verification_code: wrong(next) }, elsewhere), 400, 'invalid_request');
    }
    expectFailure(await register({ username: 'carol', email: 'carol@example.com', verification_code: next }, elsewhere), 400, 'invalid_request', /verification_code/);
  });

  it('a code expires after 10 minutes, and a new one replaces the earlier', async () => {
    const expired = await mailedCode('dave@example.com');
    account.clock.advance(10 * 60 * 1000 + 1000);
    expectFailure(await register({ username: 'dave', email: 'dave@example.com', verification_code: expired }), 400, 'invalid_request', /expired/);

    const first = await mailedCode('dave@example.com');
    const second = await mailedCode('dave@example.com');
    if (first !== second) {
      expectFailure(await register({ username: 'dave', email: 'dave@example.com', verification_code: first }), 400, 'invalid_request');
    }
    expectOk(await register({ username: 'dave', email: 'dave@example.com', verification_code: second }));
  });

  it('an address an account has already gets no code, and registering with it is a 409', async () => {
    await createUser(prisma, { username: 'erin', email: 'erin@example.com' });
    expectFailure(await askForCode('erin@example.com'), 409, 'conflict', /email/);
    expectFailure(await askForCode('Erin@Example.com'), 409, 'conflict', /email/);
    expectFailure(await register({ username: 'erin2', email: 'erin@example.com', verification_code: '123456' }), 409, 'conflict', /email/);
  });
});

it('POST /api/verification is rate limited per address mailed to and per client address: 429 with Retry-After', async () => {
  // Kept from being sent: these mails are not the point here.
  await setOption(prisma, 'SMTPServer', '');
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await askForCode('target@example.com', `198.51.100.${10 + i}`)).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  const limited = await askForCode('target@example.com', '198.51.100.99');
  expectFailure(limited, 429, 'rate_limited');
  expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

  const fromOneAddress: number[] = [];
  for (let i = 0; i < 21; i++) fromOneAddress.push((await askForCode(`someone${i}@example.com`, '203.0.113.50')).status);
  expect(fromOneAddress).toEqual([...Array(20).fill(200), 429]);
});

it('POST /api/verification answers 503 while the mail queue cannot be reached', async () => {
  const unreachable = unreachableMailQueue();
  try {
    const outage = createAccountApp({ ...account.deps, mailQueue: unreachable.queue });
    expectFailure(await request(outage).post('/api/verification').send({ email: 'frank@example.com' }), 503, 'service_unavailable');
  } finally {
    await unreachable.close();
  }
});

describe('without EmailVerificationEnabled', () => {
  it('registration takes an email or none, and no code', async () => {
    expectOk(await register({ username: 'grace' }));
    expectOk(await register({ username: 'heidi', email: 'heidi@example.com' }));
    expectFailure(await register({ username: 'heidi2', email: 'heidi@example.com' }), 409, 'conflict', /email/);
  });
});

describe('PUT /api/user/ {email} (admin)', () => {
  it('sets, clears and keeps emails unique (409)', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const ivan = await createUser(prisma, { username: 'ivan' });
    await createUser(prisma, { username: 'judy', email: 'judy@example.com' });

    expect(expectOk(await admin.agent.put('/api/user').send({ id: ivan.id, email: 'ivan@example.com' }))).toMatchObject({ email: 'ivan@example.com' });
    expectFailure(await admin.agent.put('/api/user').send({ id: ivan.id, email: 'judy@example.com' }), 409, 'conflict', /email/);
    expectFailure(await admin.agent.put('/api/user').send({ id: ivan.id, email: 'not-an-email' }), 400, 'invalid_request', /^email:/);
    expect(expectOk(await admin.agent.put('/api/user').send({ id: ivan.id, email: '' }))).toMatchObject({ email: '' });
    expect((await prisma.user.findUniqueOrThrow({ where: { id: ivan.id } })).email).toBeNull();
  });
});
