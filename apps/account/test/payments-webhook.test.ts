import { createPrismaClient } from '@modelgate/db';
import { setOption } from '@modelgate/testing';
import { checkoutEvent, signStripePayload } from '@modelgate/testing/fake-stripe';
import request from 'supertest';
import { createAccountApp } from '../src/app';
import { createTestAccount } from './support/app';

const SECRET = 'whsec_test_webhook_secret';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(async () => {
  await account.reset();
  await setOption(prisma, 'StripeWebhookSecret', SECRET);
});
afterAll(() => account.close());

const now = () => Math.floor(Date.now() / 1000);

function post(payload: string | undefined, headers: Record<string, string>) {
  const req = request(app).post('/api/stripe/webhook');
  for (const [name, value] of Object.entries(headers)) req.set(name, value);
  return payload === undefined ? req : req.send(payload);
}

function deliver(event: { payload: string }, signature = signStripePayload(event.payload, SECRET)) {
  return post(event.payload, { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': signature });
}

const paid = () => checkoutEvent({ type: 'checkout.session.completed', clientReferenceId: 'ref_abc', paymentStatus: 'paid' });

async function storedEvents() {
  return prisma.paymentEvent.findMany();
}

test('a verified event is stored in the inbox and queued with its event id as the job id, then 200', async () => {
  const event = paid();

  const res = await deliver(event);

  expect(res.status).toBe(200);
  expect(res.body).toEqual({ received: true });
  const [row] = await storedEvents();
  expect(row).toMatchObject({ provider: 'stripe', eventId: event.id, type: 'checkout.session.completed', status: 'received', attempts: 0 });
  expect(row?.payload).toBe(event.payload); // the exact bytes Stripe signed
  const job = await account.deps.paymentQueue.getJob(event.id);
  expect(job?.data).toEqual({ provider: 'stripe', eventId: event.id });
  expect(job?.opts.attempts).toBeGreaterThan(1);
  expect(job?.opts.backoff).toMatchObject({ type: 'exponential' });
});

test('the same event delivered 5 times in sequence and 20 times concurrently: one inbox row, one job', async () => {
  const event = paid();
  for (let i = 0; i < 5; i++) expect((await deliver(event)).status).toBe(200);
  const concurrent = await Promise.all(Array.from({ length: 20 }, () => deliver(event)));

  expect(concurrent.map((res) => res.status)).toEqual(Array(20).fill(200));
  expect(await storedEvents()).toHaveLength(1);
  expect(await account.deps.paymentQueue.getJobCounts('waiting')).toEqual({ waiting: 1 });
});

test('any v1 signature may match (Stripe sends several while a secret is being rolled)', async () => {
  const event = paid();
  const t = now();
  const good = signStripePayload(event.payload, SECRET, t).split('v1=')[1];
  const stale = signStripePayload(event.payload, 'whsec_old_secret', t).split('v1=')[1];
  expect((await deliver(event, `t=${t},v1=${stale},v1=${good}`)).status).toBe(200);
});

describe('rejected with 400, a short JSON reason, and nothing stored', () => {
  interface BadDelivery {
    name: string;
    request: () => { payload?: string; headers: Record<string, string> };
    reason: RegExp;
  }
  const json = { 'Content-Type': 'application/json' };
  const signedBy = (secret: string, t = now()) => {
    const { payload } = paid();
    return { payload, headers: { ...json, 'Stripe-Signature': signStripePayload(payload, secret, t) } };
  };
  const altered = (change: (payload: string) => string) => {
    const { payload, headers } = signedBy(SECRET);
    return { payload: change(payload), headers };
  };
  const cases: BadDelivery[] = [
    { name: 'forged (signed with another secret)', request: () => signedBy('whsec_attacker'), reason: /signature does not match/ },
    { name: 'stale (signed 301 s ago)', request: () => signedBy(SECRET, now() - 301), reason: /tolerance/ },
    { name: 'future-dated (301 s ahead)', request: () => signedBy(SECRET, now() + 301), reason: /tolerance/ },
    { name: 're-serialised body (same JSON, other bytes)', request: () => altered((p) => JSON.stringify(JSON.parse(p))), reason: /signature does not match/ },
    { name: 'tampered amount', request: () => altered((p) => p.replace('"amount_total": 100', '"amount_total": 100000')), reason: /signature does not match/ },
    { name: 'missing Stripe-Signature', request: () => ({ payload: paid().payload, headers: json }), reason: /Stripe-Signature/ },
    { name: 'signature without a timestamp', request: () => ({ payload: paid().payload, headers: { ...json, 'Stripe-Signature': 'v1=abcdef' } }), reason: /malformed/ },
    { name: 'empty POST with no content type', request: () => ({ headers: {} }), reason: /content type/ },
    { name: 'empty body', request: () => ({ headers: { ...json, 'Stripe-Signature': `t=${now()},v1=00` } }), reason: /missing body/ },
    { name: 'body without a content type', request: () => ({ ...signedBy(SECRET), headers: { 'Stripe-Signature': signedBy(SECRET).headers['Stripe-Signature'], 'Content-Type': '' } }), reason: /content type/ },
    { name: 'signed, but not JSON', request: () => ({ payload: 'not json', headers: { ...json, 'Stripe-Signature': signStripePayload('not json', SECRET) } }), reason: /not JSON/ },
  ];

  test.each(cases)('$name', async ({ request: build, reason }) => {
    const { payload, headers } = build();
    const res = await post(payload, headers);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toMatch(reason);
    expect(res.body.error.length).toBeLessThan(100);
    expect(await storedEvents()).toHaveLength(0);
    expect(await account.deps.paymentQueue.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });
});

test('webhook secret not configured: 503 so that Stripe retries', async () => {
  await setOption(prisma, 'StripeWebhookSecret', '');
  const res = await deliver(paid());
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ error: 'webhook secret not configured' });
  expect(await storedEvents()).toHaveLength(0);
});

test('PostgreSQL down: 503 so that Stripe retries, and nothing about the failure leaks', async () => {
  const deadPrisma = createPrismaClient({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/modelgate' });
  const offline = createAccountApp({ ...account.deps, prisma: deadPrisma });
  try {
    const event = paid();
    const res = await request(offline)
      .post('/api/stripe/webhook')
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', signStripePayload(event.payload, SECRET))
      .send(event.payload);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'temporarily unavailable' });
  } finally {
    await deadPrisma.$disconnect();
  }
});

test('a body over 1 MB is refused with 413', async () => {
  const res = await post(`{"pad":"${'x'.repeat(1_100_000)}"}`, { 'Content-Type': 'application/json', 'Stripe-Signature': `t=${now()},v1=00` });
  expect(res.status).toBe(413);
  expect(res.body.error).toMatch(/larger/);
});
