import { OPTION_DEFINITIONS } from '@modelgate/schemas';
import { setOption, TEST_PASSWORD } from '@modelgate/testing';
import request from 'supertest';
import { bootstrapAccount } from '../src/bootstrap';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { listenForInvalidations } from './support/invalidations';
import { logIn, loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

describe('GET /api/option/', () => {
  it('lists every option with its value or default, leaving secret values out', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    await setOption(prisma, 'StripeApiSecret', 'sk_live_do_not_show');
    await setOption(prisma, 'QuotaForNewUser', '42');
    const res = await root.agent.get('/api/option/');
    const options = expectOk(res) as { key: string; value: string }[];
    expect(options).toContainEqual({ key: 'QuotaForNewUser', value: '42' });
    expect(options).toContainEqual({ key: 'QuotaPerUnit', value: '500000' });
    expect(options.map((o) => o.key)).not.toContain('StripeApiSecret');
    expect(options.map((o) => o.key)).not.toContain('StripeWebhookSecret');
    expect(options).toHaveLength(Object.values(OPTION_DEFINITIONS).filter((d) => !d.secret).length);
    expect(JSON.stringify(res.body)).not.toContain('sk_live_do_not_show');
  });

  it('lists the cache price maps (docs/api.md 2.11) with their shipped defaults until root sets them', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    const listed = () => root.agent.get('/api/option/').then((res) => new Map((expectOk(res) as { key: string; value: string }[]).map((o) => [o.key, o.value])));
    const defaults = await listed();
    expect(JSON.parse(defaults.get('CacheRatio') ?? '{}')).toMatchObject({ 'gpt-4o': 0.5, 'gpt-5': 0.1, 'claude-sonnet-4-5': 0.1 });
    expect(JSON.parse(defaults.get('CacheCreationRatio') ?? '{}')).toMatchObject({ 'claude-sonnet-4-5': 1.25, 'claude-haiku-4-5': 1.25 });
    expect(JSON.parse(defaults.get('ModelRatio') ?? '{}')).toMatchObject({ 'gpt-4.1': 1, 'claude-opus-4-1': 7.5, 'gemini-2.5-flash-lite': 0.05 });

    expectOk(await root.agent.put('/api/option/').send({ key: 'CacheRatio', value: { 'my-model': 0.2 } }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'CacheCreationRatio', value: '{"my-model": 1.5}' }));
    const stored = Object.fromEntries((await prisma.option.findMany()).map((o) => [o.key, o.value]));
    expect(stored).toEqual({ CacheRatio: '{"my-model":0.2}', CacheCreationRatio: '{"my-model":1.5}' });
    const changed = await listed();
    expect([changed.get('CacheRatio'), changed.get('CacheCreationRatio')]).toEqual(['{"my-model":0.2}', '{"my-model":1.5}']);
  });

  it('is for root only', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expectFailure(await admin.agent.get('/api/option/'), 403, 'forbidden');
    expectFailure(await admin.agent.put('/api/option/').send({ key: 'QuotaForNewUser', value: '1' }), 403, 'forbidden');
    expectFailure(await request(account.app).get('/api/option/'), 401, 'unauthorized');
  });
});

describe('PUT /api/option/', () => {
  it('stores text, numbers, booleans and objects in new-api text form and tells the relays', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    const listener = await listenForInvalidations();
    try {
      expectOk(await root.agent.put('/api/option/').send({ key: 'QuotaForNewUser', value: 1000 }));
      await expect(listener.next()).resolves.toEqual({ kind: 'options' });
    } finally {
      await listener.close();
    }
    expectOk(await root.agent.put('/api/option/').send({ key: 'RetryTimes', value: '3' }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'RegisterEnabled', value: false }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'ModelRatio', value: { 'my-model': 2.5 } }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'StripeWebhookSecret', value: 'whsec_secret' }));
    const stored = Object.fromEntries((await prisma.option.findMany()).map((o) => [o.key, o.value]));
    expect(stored).toEqual({
      QuotaForNewUser: '1000',
      RetryTimes: '3',
      RegisterEnabled: 'false',
      ModelRatio: '{"my-model":2.5}',
      StripeWebhookSecret: 'whsec_secret',
    });
    expectFailure(await request(account.app).post('/api/user/register').send({ username: 'late', password: 'pa55word!' }), 403, 'forbidden');
  });

  it.each([
    [{ key: 'NoSuchOption', value: '1' }, /key/],
    [{ key: 'QuotaPerUnit', value: '-5' }, /value/],
    [{ key: 'QuotaPerUnit', value: 'lots' }, /value/],
    [{ key: 'RetryTimes', value: 99 }, /value/],
    [{ key: 'ModelRatio', value: '{broken' }, /value/],
    [{ key: 'GroupRatio', value: { vip: 'fast' } }, /value/],
    [{ key: 'CacheRatio', value: '{broken' }, /value: CacheRatio: must be JSON text/],
    [{ key: 'CacheRatio', value: { 'gpt-4o': -0.5 } }, /value: CacheRatio: entry "gpt-4o"/],
    [{ key: 'CacheCreationRatio', value: ['claude-sonnet-4-5'] }, /value: CacheCreationRatio: must be a JSON object/],
    [{ key: 'CacheCreationRatio', value: { constructor: 2 } }, /value: CacheCreationRatio: key "constructor"/],
    [{ key: 'RegisterEnabled', value: 'maybe' }, /value/],
    [{ key: 'QuotaPerUnit' }, /value/],
    [{ key: 'QuotaPerUnit', value: '5', extra: 1 }, /extra/],
    [{ key: 'QuotaForNewUser', value: '' }, /value: QuotaForNewUser: must be a decimal integer/],
    [{ key: 'QuotaForNewUser', value: ' 5 ' }, /decimal integer/],
    [{ key: 'QuotaForNewUser', value: '1e3' }, /decimal integer/],
    [{ key: 'QuotaForNewUser', value: '0x10' }, /decimal integer/],
    [{ key: 'QuotaForNewUser', value: 2.5 }, /decimal integer/],
    [{ key: 'QuotaForNewUser', value: null }, /decimal integer/],
    [{ key: 'StripeMinTopUp', value: true }, /decimal integer/],
    [{ key: 'StripeUnitPrice', value: '1e3' }, /StripeUnitPrice/],
    [{ key: 'StripePriceId', value: null }, /StripePriceId: must be a string/],
    [{ key: 'StripeApiSecret', value: 42 }, /StripeApiSecret: must be a string/],
    [{ key: 'StripeWebhookSecret', value: { secret: 'x' } }, /StripeWebhookSecret: must be a string/],
    [{ key: 'RegisterEnabled', value: 1 }, /must be true or false/],
  ])('rejects %j with 400', async (body, field) => {
    const root = await loggedInUser(account, { role: ROLE.root });
    expectFailure(await root.agent.put('/api/option/').send(body), 400, 'invalid_request', field);
    expect(await prisma.option.count()).toBe(0);
  });
});

describe('PUT /api/option/ normalisation', () => {
  it('stores numbers as plain decimal text and booleans as true/false, whether sent as JSON or text', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    expectOk(await root.agent.put('/api/option/').send({ key: 'QuotaForNewUser', value: '007' }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'QuotaPerUnit', value: 250000 }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'StripeUnitPrice', value: '0.50' }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'RegisterEnabled', value: 'true' }));
    expectOk(await root.agent.put('/api/option/').send({ key: 'StripePriceId', value: 'price_123' }));
    const stored = Object.fromEntries((await prisma.option.findMany()).map((o) => [o.key, o.value]));
    expect(stored).toEqual({ QuotaForNewUser: '7', QuotaPerUnit: '250000', StripeUnitPrice: '0.5', RegisterEnabled: 'true', StripePriceId: 'price_123' });
    const listed = expectOk(await root.agent.get('/api/option/')) as { key: string; value: string }[];
    expect(listed).toContainEqual({ key: 'QuotaForNewUser', value: '7' });
    expect(expectOk(await request(account.app).get('/api/status'))).toMatchObject({ quota_per_unit: 250000 });
  });
});

describe('boot', () => {
  it('seeds Stripe options and ServerAddress from the environment only when they are not set', async () => {
    const seeded = createTestAccount({
      STRIPE_API_SECRET: 'sk_test_env',
      STRIPE_PRICE_ID: 'price_env',
      PUBLIC_URL: 'https://Gateway.example.com',
      ROOT_PASSWORD: 'root-password-1',
    });
    try {
      await setOption(prisma, 'StripePriceId', 'price_set_by_admin');
      await bootstrapAccount(seeded.deps);
      await bootstrapAccount(seeded.deps);
      const stored = Object.fromEntries((await prisma.option.findMany()).map((o) => [o.key, o.value]));
      expect(stored).toEqual({ StripeApiSecret: 'sk_test_env', StripePriceId: 'price_set_by_admin', ServerAddress: 'https://gateway.example.com' });
    } finally {
      await seeded.close();
    }
  });

  it('seeds ServerAddress with the local edge when PUBLIC_URL is unset', async () => {
    const seeded = createTestAccount({ EDGE_PORT: '3100', ROOT_PASSWORD: 'root-password-1' });
    try {
      await bootstrapAccount(seeded.deps);
      expect(await prisma.option.findUnique({ where: { key: 'ServerAddress' } })).toMatchObject({ value: 'http://127.0.0.1:3100' });
    } finally {
      await seeded.close();
    }
  });

  it('warns at start while Stripe is configured and ServerAddress is still a local address', async () => {
    const local = createTestAccount({ STRIPE_API_SECRET: 'sk_test_env', ROOT_PASSWORD: 'root-password-1' });
    try {
      await bootstrapAccount(local.deps);
      expect(local.logLines.filter((line) => line.includes('ServerAddress is a local address'))).toHaveLength(1);
    } finally {
      await local.close();
    }
    await setOption(prisma, 'ServerAddress', 'https://gateway.example.com');
    const configured = createTestAccount({ STRIPE_API_SECRET: 'sk_test_env', ROOT_PASSWORD: 'root-password-1' });
    try {
      await bootstrapAccount(configured.deps);
      expect(configured.logLines.join('\n')).not.toContain('ServerAddress is a local address');
    } finally {
      await configured.close();
    }
  });

  it('creates the root user with ROOT_PASSWORD once', async () => {
    const booted = createTestAccount({ ROOT_USERNAME: 'boss', ROOT_PASSWORD: 'root-password-1' });
    try {
      await bootstrapAccount(booted.deps);
      await bootstrapAccount(booted.deps);
      expect(await prisma.user.findMany({ select: { username: true, role: true } })).toEqual([{ username: 'boss', role: 100 }]);
      const root = await logIn(booted.app, 'boss', 'root-password-1');
      expect(expectOk(await root.agent.get('/api/option/'))).toEqual(expect.any(Array));
      expect(booted.logLines.join('\n')).not.toContain('root-password-1');
    } finally {
      await booted.close();
    }
  });

  it('without ROOT_PASSWORD, generates a strong password and logs it exactly once', async () => {
    await bootstrapAccount(account.deps);
    await bootstrapAccount(account.deps);
    const lines = account.logLines.filter((line) => line.includes('generated password'));
    expect(lines).toHaveLength(1);
    const password = /generated password: (\S+)/.exec(JSON.parse(lines[0] ?? '{}').msg)?.[1] ?? '';
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    await logIn(account.app, 'root', password);
    await expect(logIn(account.app, 'root', TEST_PASSWORD)).rejects.toThrow(/401/);
  });

  it('does nothing when a root user exists', async () => {
    await loggedInUser(account, { role: ROLE.root, username: 'someone' });
    await bootstrapAccount(account.deps);
    expect(await prisma.user.findMany({ select: { username: true } })).toEqual([{ username: 'someone' }]);
    expect(account.logLines.join('\n')).not.toContain('created root user');
  });
});
