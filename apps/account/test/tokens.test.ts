import { createHash } from 'node:crypto';
import { createApiKey, setOption } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

interface TokenView {
  id: number;
  key: string;
  status: number;
  name: string;
  expired_time: number;
  remain_quota: number;
  unlimited_quota: boolean;
  model_limits: string;
  allow_ips: string;
  group: string;
}

const inOneHour = () => Math.floor(account.clock.now() / 1000) + 3600;

describe('POST /api/token/', () => {
  it('returns the full sk- key once; the database keeps only its SHA-256 and display parts', async () => {
    const { agent, id: userId } = await loggedInUser(account);
    const created = expectOk(await agent.post('/api/token/').send({
      name: 'ci',
      remain_quota: 5000,
      expired_time: -1,
      model_limits_enabled: true,
      model_limits: 'gpt-4o-mini, gemini-2.5-flash,',
      allow_ips: '10.0.0.1\n192.168.0.0/16\n2001:db8::/32',
    })) as TokenView;
    expect(created.key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(created).toMatchObject({
      name: 'ci',
      status: 1,
      remain_quota: 5000,
      unlimited_quota: false,
      expired_time: -1,
      model_limits: 'gpt-4o-mini,gemini-2.5-flash',
      allow_ips: '10.0.0.1\n192.168.0.0/16\n2001:db8::/32',
      group: '',
    });
    const row = await prisma.token.findUniqueOrThrow({ where: { id: created.id } });
    const body = created.key.slice(3);
    expect(row).toMatchObject({
      userId,
      keyHash: createHash('sha256').update(created.key).digest('hex'),
      keyPrefix: body.slice(0, 4),
      keySuffix: body.slice(-4),
    });
    expect(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(body);

    const listed = expectOk(await agent.get('/api/token/')) as { items: TokenView[] };
    expect(listed.items[0]?.key).toBe(`sk-${body.slice(0, 4)}...${body.slice(-4)}`);
    const fetched = expectOk(await agent.get(`/api/token/${created.id}`)) as TokenView;
    expect(fetched.key).toBe(listed.items[0]?.key);
  });

  it('stores IPv4-mapped IPv6 entries as IPv4, and IPv6 in its canonical form', async () => {
    const { agent } = await loggedInUser(account);
    const created = expectOk(await agent.post('/api/token/').send({
      name: 'dual-stack',
      allow_ips: '::ffff:192.0.2.7\n::ffff:10.0.0.0/104, 2001:DB8:0:0::/32\n\n',
    })) as TokenView;
    expect(created.allow_ips).toBe('192.0.2.7\n10.0.0.0/8\n2001:db8::/32');
  });

  it('makes keys without a quota setting unlimited, and distinct', async () => {
    const { agent } = await loggedInUser(account);
    const keys = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const token = expectOk(await agent.post('/api/token/').send({ name: `k${i}` })) as TokenView;
      expect(token.unlimited_quota).toBe(true);
      keys.add(token.key);
    }
    expect(keys.size).toBe(5);
  });

  it.each([
    [{}, /name/],
    [{ name: '' }, /name/],
    [{ name: 'x', expired_time: 1000 }, /expired_time/],
    [{ name: 'x', allow_ips: '10.0.0.1\nnot-an-ip' }, /allow_ips/],
    [{ name: 'x', allow_ips: '10.0.0.0/33' }, /allow_ips: "10.0.0.0\/33": the prefix length must be at most 32/],
    [{ name: 'x', allow_ips: '::ffff:10.0.0.0/64' }, /allow_ips: "::ffff:10.0.0.0\/64": an IPv4-mapped range needs a prefix length from 96 to 128/],
    [{ name: 'x', remain_quota: -1 }, /remain_quota/],
    [{ name: 'x', group: 'vip' }, /group/],
    [{ name: 'x', user_id: 2 }, /user_id/],
    [{ name: 'x', key: 'sk-chosen' }, /key/],
    [{ name: 'x', used_quota: 5 }, /used_quota/],
  ])('rejects %j with 400', async (body, field) => {
    const { agent } = await loggedInUser(account);
    expectFailure(await agent.post('/api/token/').send(body), 400, 'invalid_request', field);
    expect(await prisma.token.count()).toBe(0);
  });

  it('lets a user pick their own group, and an admin any priced group', async () => {
    await setOption(prisma, 'GroupRatio', { default: 1, vip: 2 });
    const vipUser = await loggedInUser(account, { group: 'vip' });
    expect(expectOk(await vipUser.agent.post('/api/token/').send({ name: 'v', group: 'vip' }))).toMatchObject({ group: 'vip' });
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expect(expectOk(await admin.agent.post('/api/token/').send({ name: 'a', group: 'vip' }))).toMatchObject({ group: 'vip' });
    expectFailure(await admin.agent.post('/api/token/').send({ name: 'a', group: 'unknown' }), 400, 'invalid_request', /group/);
  });
});

describe('listing, update and delete', () => {
  it('pages own tokens, newest first', async () => {
    const { agent, id } = await loggedInUser(account);
    for (let i = 0; i < 3; i++) await createApiKey(prisma, id, { name: `t${i}` });
    const page = expectOk(await agent.get('/api/token/?p=2&page_size=2')) as { page: number; page_size: number; total: number; items: TokenView[] };
    expect(page).toMatchObject({ page: 2, page_size: 2, total: 3 });
    expect(page.items.map((t) => t.name)).toEqual(['t0']);
  });

  it('updates fields and status; an expired or exhausted key cannot be re-enabled as is', async () => {
    const { agent, id } = await loggedInUser(account);
    const { token } = await createApiKey(prisma, id, { remainQuota: 100 });
    const updated = expectOk(await agent.put('/api/token/').send({ id: token.id, name: 'renamed', status: 2, remain_quota: 0 })) as TokenView;
    expect(updated).toMatchObject({ name: 'renamed', status: 2, remain_quota: 0 });
    expectFailure(await agent.put('/api/token/').send({ id: token.id, status: 1 }), 400, 'invalid_request', /remain_quota/);
    expect(expectOk(await agent.put('/api/token/').send({ id: token.id, status: 1, remain_quota: 10 }))).toMatchObject({ status: 1 });

    // One value: the clock runs on, and two calls may fall either side of a second.
    const expiresAt = inOneHour();
    const expiring = expectOk(await agent.put('/api/token/').send({ id: token.id, expired_time: expiresAt })) as TokenView;
    expect(expiring.expired_time).toBe(expiresAt);
    account.clock.advance(2 * 3600 * 1000);
    expect(expectOk(await agent.get(`/api/token/${token.id}`))).toMatchObject({ status: 3 });
    await agent.put('/api/token/').send({ id: token.id, status: 2 }).expect(200);
    expectFailure(await agent.put('/api/token/').send({ id: token.id, status: 1 }), 400, 'invalid_request', /expired_time/);
    expect(expectOk(await agent.put('/api/token/').send({ id: token.id, status: 1, expired_time: -1 }))).toMatchObject({ status: 1 });
    expectFailure(await agent.put('/api/token/').send({ id: token.id, status: 3 }), 400, 'invalid_request', /status/);
    expectFailure(await agent.put('/api/token/').send({ id: token.id, key_hash: 'x' }), 400, 'invalid_request', /key_hash/);
  });

  it('deletes a token', async () => {
    const { agent, id } = await loggedInUser(account);
    const { token } = await createApiKey(prisma, id);
    expectOk(await agent.delete(`/api/token/${token.id}`));
    expect(await prisma.token.count()).toBe(0);
    expectFailure(await agent.delete(`/api/token/${token.id}`), 404, 'not_found');
  });

  it("answers 404 for another user's token on read, update and delete, and never lists it (BOLA)", async () => {
    const alice = await loggedInUser(account);
    const bob = await loggedInUser(account);
    const { token } = await createApiKey(prisma, alice.id, { name: 'alice-key' });
    expectFailure(await bob.agent.get(`/api/token/${token.id}`), 404, 'not_found');
    expectFailure(await bob.agent.put('/api/token/').send({ id: token.id, name: 'stolen', status: 2 }), 404, 'not_found');
    expectFailure(await bob.agent.delete(`/api/token/${token.id}`), 404, 'not_found');
    expect((expectOk(await bob.agent.get('/api/token/')) as { total: number }).total).toBe(0);
    expect(await prisma.token.findUniqueOrThrow({ where: { id: token.id } })).toMatchObject({ name: 'alice-key', status: 1 });
    expectFailure(await bob.agent.get('/api/token/999999'), 404, 'not_found');
    expectFailure(await bob.agent.get('/api/token/abc'), 404, 'not_found');
  });

  it('requires a login', async () => {
    expectFailure(await request(app).get('/api/token/'), 401, 'unauthorized');
    expectFailure(await request(app).post('/api/token/').send({ name: 'x' }), 401, 'unauthorized');
  });
});
