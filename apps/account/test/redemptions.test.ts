import { createHash } from 'node:crypto';
import { ledgerMismatches } from '@modelgate/db';
import { createUser } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { listenForInvalidations } from './support/invalidations';
import { type LoggedInUser, logIn, loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

interface RedemptionView {
  id: number;
  name: string;
  key: string;
  quota: number;
  status: number;
  created_by: number;
  created_at: number;
  expired_time: number;
  redeemed_by: number | null;
  redeemed_at: number | null;
}

interface Page<T> {
  page: number;
  page_size: number;
  total: number;
  items: T[];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const nowSeconds = () => Math.floor(account.clock.now() / 1000);
const NOT_VALID = /not valid or has already been used/;

/** A user created in the database and logged in from its own address (rate limits count per address). */
async function userAt(ip: string, overrides: { quota?: bigint } = {}): Promise<LoggedInUser> {
  const user = await createUser(prisma, overrides);
  return logIn(app, user.username, undefined, ip);
}

async function createCodes(admin: LoggedInUser, body: Record<string, unknown>): Promise<string[]> {
  return expectOk(await admin.agent.post('/api/redemption/').send(body)) as string[];
}

async function quotaOf(userId: number): Promise<bigint> {
  return (await prisma.user.findUniqueOrThrow({ where: { id: userId } })).quota;
}

describe('admin: POST /api/redemption/', () => {
  it('creates a batch of distinct 32-character codes, shown once; the database keeps only their hashes', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const expires = nowSeconds() + 86_400;
    const codes = await createCodes(admin, { name: 'launch', quota: 250_000, count: 5, expired_time: expires });
    expect(codes).toHaveLength(5);
    for (const code of codes) expect(code).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(new Set(codes).size).toBe(5);

    const rows = await prisma.redemption.findMany({ orderBy: { id: 'asc' } });
    expect(rows.map((row) => row.codeHash).sort()).toEqual(codes.map(sha256).sort());
    for (const row of rows) {
      const code = codes.find((candidate) => sha256(candidate) === row.codeHash)!;
      expect(row).toMatchObject({ name: 'launch', quota: 250_000n, status: 1, createdBy: admin.id, codePrefix: code.slice(0, 4), redeemedBy: null });
      expect(row.expiresAt?.getTime()).toBe(expires * 1000);
    }
    const stored = JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    for (const code of codes) expect(stored).not.toContain(code);
  });

  it('makes one code by default and, without expired_time (or with -1 or 0), codes that never expire', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expect(await createCodes(admin, { name: 'one', quota: 1 })).toHaveLength(1);
    await createCodes(admin, { name: 'never', quota: 1, count: 2, expired_time: -1 });
    await createCodes(admin, { name: 'new-api never', quota: 1, count: 1, expired_time: 0 });
    const rows = await prisma.redemption.findMany();
    expect(rows).toHaveLength(4);
    expect(rows.every((row) => row.expiresAt === null)).toBe(true);
  });

  it.each([
    ['an empty name', { name: ' ', quota: 1, count: 1 }, 'name'],
    ['a name over 50 characters', { name: 'n'.repeat(51), quota: 1, count: 1 }, 'name'],
    ['no name', { quota: 1, count: 1 }, 'name'],
    ['quota 0', { name: 'x', quota: 0, count: 1 }, 'quota'],
    ['a negative quota', { name: 'x', quota: -5, count: 1 }, 'quota'],
    ['a fractional quota', { name: 'x', quota: 1.5, count: 1 }, 'quota'],
    ['a quota as text', { name: 'x', quota: '100', count: 1 }, 'quota'],
    ['count 0', { name: 'x', quota: 1, count: 0 }, 'count'],
    ['count 101', { name: 'x', quota: 1, count: 101 }, 'count'],
    ['an expiry in the past', { name: 'x', quota: 1, count: 1, expired_time: 1_000_000 }, 'expired_time'],
    ['an expiry below -1', { name: 'x', quota: 1, count: 1, expired_time: -2 }, 'expired_time'],
    ['an unknown field', { name: 'x', quota: 1, count: 1, key: 'mine' }, 'key'],
  ])('refuses %s with 400 naming the field, creating nothing', async (_label, body, field) => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const res = await admin.agent.post('/api/redemption/').send(body);
    expectFailure(res, 400, 'invalid_request', new RegExp(`^(unknown field: )?${field}`));
    expect(await prisma.redemption.count()).toBe(0);
  });

  it('is for admins: 403 for a common user, 401 without a login, on every admin route', async () => {
    const user = await loggedInUser(account);
    const calls = [
      (agent: ReturnType<typeof request.agent> | ReturnType<typeof request>) => agent.post('/api/redemption/').send({ name: 'x', quota: 1, count: 1 }),
      (agent: ReturnType<typeof request.agent> | ReturnType<typeof request>) => agent.get('/api/redemption/'),
      (agent: ReturnType<typeof request.agent> | ReturnType<typeof request>) => agent.get('/api/redemption/1'),
      (agent: ReturnType<typeof request.agent> | ReturnType<typeof request>) => agent.put('/api/redemption/').send({ id: 1, status: 2 }),
      (agent: ReturnType<typeof request.agent> | ReturnType<typeof request>) => agent.delete('/api/redemption/1'),
    ];
    for (const call of calls) {
      expectFailure(await call(user.agent), 403, 'forbidden');
      expectFailure(await call(request(app)), 401, 'unauthorized');
    }
    expect(await prisma.redemption.count()).toBe(0);
  });
});

describe('admin: list, read, update, delete', () => {
  it('lists newest first, paged, with the code masked to its first characters, filtered by name', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [spring] = await createCodes(admin, { name: 'Spring promo', quota: 100, count: 1 });
    const autumn = await createCodes(admin, { name: 'autumn promo', quota: 200, count: 2 });
    await createCodes(admin, { name: 'support refund', quota: 300, count: 1 });

    const first = expectOk(await admin.agent.get('/api/redemption/?p=1&page_size=3')) as Page<RedemptionView>;
    expect(first).toMatchObject({ page: 1, page_size: 3, total: 4 });
    expect(first.items.map((item) => item.name)).toEqual(['support refund', 'autumn promo', 'autumn promo']);
    const second = expectOk(await admin.agent.get('/api/redemption/?p=2&page_size=3')) as Page<RedemptionView>;
    expect(second.items).toHaveLength(1);
    expect(second.items[0]).toEqual({
      id: 1,
      name: 'Spring promo',
      key: `${spring!.slice(0, 4)}…`,
      quota: 100,
      status: 1,
      created_by: admin.id,
      created_at: expect.any(Number),
      expired_time: -1,
      redeemed_by: null,
      redeemed_at: null,
    });
    for (const code of [spring!, ...autumn]) expect(JSON.stringify([first, second])).not.toContain(code);

    const promos = expectOk(await admin.agent.get('/api/redemption/?keyword=PROMO')) as Page<RedemptionView>;
    expect(promos.total).toBe(3);
    expect(promos.items.map((item) => item.name).sort()).toEqual(['Spring promo', 'autumn promo', 'autumn promo']);
    const all = expectOk(await admin.agent.get('/api/redemption/?keyword=')) as Page<RedemptionView>;
    expect(all.total).toBe(4);

    expect(expectOk(await admin.agent.get('/api/redemption/1'))).toEqual(second.items[0]);
    expectFailure(await admin.agent.get('/api/redemption/99'), 404, 'not_found');
    expectFailure(await admin.agent.get('/api/redemption/abc'), 404, 'not_found');
    expectFailure(await admin.agent.get('/api/redemption/?page_size=101'), 400, 'invalid_request', /^page_size/);
    expectFailure(await admin.agent.get(`/api/redemption/?keyword=${'k'.repeat(51)}`), 400, 'invalid_request', /^keyword/);
  });

  it('renames, reprices, disables, enables and changes the expiry of an unused code', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    await createCodes(admin, { name: 'draft', quota: 100, count: 1 });
    const expires = nowSeconds() + 3600;
    const updated = expectOk(await admin.agent.put('/api/redemption/').send({ id: 1, name: 'final', quota: 500, status: 2, expired_time: expires })) as RedemptionView;
    expect(updated).toMatchObject({ id: 1, name: 'final', quota: 500, status: 2, expired_time: expires });
    const enabled = expectOk(await admin.agent.put('/api/redemption/').send({ id: 1, status: 1, expired_time: -1 })) as RedemptionView;
    expect(enabled).toMatchObject({ name: 'final', quota: 500, status: 1, expired_time: -1 });
    expect(expectOk(await admin.agent.put('/api/redemption/').send({ id: 1 }))).toEqual(enabled);
  });

  it.each([
    ['status 3 (used is only set by a redemption)', { id: 1, status: 3 }, 'status'],
    ['quota 0', { id: 1, quota: 0 }, 'quota'],
    ['an expiry in the past', { id: 1, expired_time: 1_000_000 }, 'expired_time'],
    ['no id', { name: 'x' }, 'id'],
    ['an unknown field', { id: 1, code_hash: 'x' }, 'code_hash'],
  ])('refuses an update with %s: 400 naming the field, nothing changed', async (_label, body, field) => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    await createCodes(admin, { name: 'kept', quota: 100, count: 1 });
    const before = await prisma.redemption.findUniqueOrThrow({ where: { id: 1 } });
    expectFailure(await admin.agent.put('/api/redemption/').send(body), 400, 'invalid_request', new RegExp(`^(unknown field: )?${field}`));
    expect(await prisma.redemption.findUniqueOrThrow({ where: { id: 1 } })).toEqual(before);
  });

  it('refuses to change a used code (400) and answers 404 for an unknown one', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [code] = await createCodes(admin, { name: 'gift', quota: 100, count: 1 });
    const user = await loggedInUser(account);
    expectOk(await user.agent.post('/api/user/topup').send({ key: code }));
    const before = await prisma.redemption.findUniqueOrThrow({ where: { id: 1 } });
    for (const body of [{ id: 1, status: 1 }, { id: 1, quota: 999 }, { id: 1, name: 'renamed' }, { id: 1 }]) {
      expectFailure(await admin.agent.put('/api/redemption/').send(body), 400, 'invalid_request', /used/);
    }
    expect(await prisma.redemption.findUniqueOrThrow({ where: { id: 1 } })).toEqual(before);
    expectFailure(await admin.agent.put('/api/redemption/').send({ id: 42, status: 2 }), 404, 'not_found');
  });

  it('deletes a code, which can then no longer be redeemed', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [code] = await createCodes(admin, { name: 'oops', quota: 100, count: 1 });
    expect(expectOk(await admin.agent.delete('/api/redemption/1'))).toBeNull();
    expect(await prisma.redemption.count()).toBe(0);
    expectFailure(await admin.agent.delete('/api/redemption/1'), 404, 'not_found');
    const user = await loggedInUser(account);
    expectFailure(await user.agent.post('/api/user/topup').send({ key: code }), 400, 'invalid_request', NOT_VALID);
  });
});

describe('POST /api/user/topup', () => {
  it('credits the quota with one top-up log row, marks the code used and tells the relays', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [code] = await createCodes(admin, { name: 'welcome', quota: 750_000, count: 1 });
    const user = await loggedInUser(account, { quota: 1000n });
    const invalidations = await listenForInvalidations();
    try {
      expect(expectOk(await user.agent.post('/api/user/topup').send({ key: ` ${code} ` }))).toBe(750_000);
      expect(await invalidations.next()).toEqual({ kind: 'user', userId: user.id });
    } finally {
      await invalidations.close();
    }
    expect(expectOk(await user.agent.get('/api/user/self'))).toMatchObject({ quota: 751_000 });
    const rows = await prisma.log.findMany({ where: { userId: user.id, type: 1 } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ quota: 750_000n, content: `redeemed code ${code!.slice(0, 4)}… (welcome)` });
    expect(rows[0]!.content).not.toContain(code);
    const logs = expectOk(await user.agent.get('/api/log/self?type=1')) as Page<{ quota: number; content: string }>;
    expect(logs.items).toEqual([expect.objectContaining({ quota: 750_000, content: `redeemed code ${code!.slice(0, 4)}… (welcome)` })]);

    const redeemed = expectOk(await admin.agent.get('/api/redemption/1')) as RedemptionView;
    expect(redeemed).toMatchObject({ status: 3, redeemed_by: user.id, redeemed_at: expect.any(Number) });
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('credits a user in debt too', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [code] = await createCodes(admin, { name: 'rescue', quota: 500, count: 1 });
    const user = await loggedInUser(account);
    await prisma.$transaction([
      prisma.user.update({ where: { id: user.id }, data: { quota: -200n } }),
      prisma.log.create({ data: { userId: user.id, type: 2, quota: -200n, content: 'charged beyond its reservation' } }),
    ]);
    expect(expectOk(await user.agent.post('/api/user/topup').send({ key: code }))).toBe(500);
    expect(await quotaOf(user.id)).toBe(300n);
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('lets exactly one of 20 users redeeming one code at once have it, credited once', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [code] = await createCodes(admin, { name: 'race', quota: 12_345, count: 1 });
    const users = await Promise.all(Array.from({ length: 20 }, (_, i) => userAt(`198.51.100.${i + 1}`)));
    const answers = await Promise.all(users.map((user) => user.agent.post('/api/user/topup').send({ key: code })));
    const winners = answers.flatMap((res, i) => (res.status === 200 ? [users[i]!] : []));
    expect(winners).toHaveLength(1);
    for (const res of answers.filter((answer) => answer.status !== 200)) expectFailure(res, 400, 'invalid_request', NOT_VALID);
    expect(await prisma.log.findMany({ where: { type: 1 }, select: { userId: true, quota: true } })).toEqual([{ userId: winners[0]!.id, quota: 12_345n }]);
    const balances = await prisma.user.findMany({ where: { id: { in: users.map((user) => user.id) } }, select: { quota: true } });
    expect(balances.reduce((sum, row) => sum + row.quota, 0n)).toBe(12_345n);
    expect(await prisma.redemption.findUniqueOrThrow({ where: { id: 1 } })).toMatchObject({ status: 3, redeemedBy: winners[0]!.id });
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('credits one user sending the same code 20 times at once exactly once', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [code] = await createCodes(admin, { name: 'double', quota: 4_000, count: 1 });
    const user = await loggedInUser(account);
    const answers = await Promise.all(Array.from({ length: 20 }, () => user.agent.post('/api/user/topup').send({ key: code })));
    expect(answers.filter((res) => res.status === 200)).toHaveLength(1);
    // The others were refused, as used codes or, past the failure budget, as too many attempts.
    for (const res of answers.filter((answer) => answer.status !== 200)) expect([400, 429]).toContain(res.status);
    expect(await quotaOf(user.id)).toBe(4_000n);
    expect(await prisma.log.count({ where: { userId: user.id, type: 1 } })).toBe(1);
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('refuses used, disabled, expired and unknown codes with 400 and credits nothing', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [used, disabled, expiring] = await createCodes(admin, { name: 'mixed', quota: 100, count: 3 });
    const user = await loggedInUser(account);
    expectOk(await user.agent.post('/api/user/topup').send({ key: used }));
    expectOk(await admin.agent.put('/api/redemption/').send({ id: 2, status: 2 }));
    expectOk(await admin.agent.put('/api/redemption/').send({ id: 3, expired_time: nowSeconds() + 60 }));
    account.clock.advance(61_000);

    const other = await loggedInUser(account);
    const refusals = [
      [used, NOT_VALID],
      [disabled, /has been disabled/],
      [expiring, /has expired/],
      ['A'.repeat(32), NOT_VALID],
      ['not even a code', NOT_VALID],
    ] as const;
    for (const [key, message] of refusals) {
      const res = await other.agent.post('/api/user/topup').send({ key });
      expectFailure(res, 400, 'invalid_request', message);
      expect(res.body.message).not.toContain(key);
    }
    expect(await quotaOf(other.id)).toBe(0n);
    expect(await prisma.log.count({ where: { userId: other.id } })).toBe(0);
    expect(await prisma.redemption.findMany({ where: { id: { in: [2, 3] } }, select: { status: true } })).toEqual(
      expect.arrayContaining([{ status: 2 }, { status: 1 }]),
    );
  });

  it.each([
    ['no key', {}, 'key'],
    ['an empty key', { key: '  ' }, 'key'],
    ['a key over 64 characters', { key: 'k'.repeat(65) }, 'key'],
    ['a key that is not text', { key: 12345 }, 'key'],
    ['an unknown field', { key: 'abc', user_id: 1 }, 'user_id'],
  ])('refuses a body with %s: 400 naming the field', async (_label, body, field) => {
    const user = await loggedInUser(account);
    expectFailure(await user.agent.post('/api/user/topup').send(body), 400, 'invalid_request', new RegExp(`^(unknown field: )?${field}`));
  });

  it('needs a login', async () => {
    expectFailure(await request(app).post('/api/user/topup').send({ key: 'abc' }), 401, 'unauthorized');
  });
});

describe('rate limit on failed redemptions', () => {
  it('answers 429 with Retry-After after 10 failures of one user, even for a good code; other users go on', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [good, another] = await createCodes(admin, { name: 'real', quota: 100, count: 2 });
    const guesser = await userAt('203.0.113.10');
    for (let i = 0; i < 10; i++) {
      expectFailure(await guesser.agent.post('/api/user/topup').send({ key: `guess${i}` }), 400, 'invalid_request');
    }
    const limited = await guesser.agent.post('/api/user/topup').send({ key: good });
    expectFailure(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(await quotaOf(guesser.id)).toBe(0n);
    expect((await prisma.redemption.findUniqueOrThrow({ where: { id: 1 } })).status).toBe(1);

    const honest = await userAt('203.0.113.11');
    expect(expectOk(await honest.agent.post('/api/user/topup').send({ key: another }))).toBe(100);
  });

  it('answers 429 to every account of one address after 30 failures from it', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [good] = await createCodes(admin, { name: 'real', quota: 100, count: 1 });
    const ip = '203.0.113.20';
    for (let u = 0; u < 3; u++) {
      const guesser = await userAt(ip);
      for (let i = 0; i < 10; i++) expectFailure(await guesser.agent.post('/api/user/topup').send({ key: `guess${u}-${i}` }), 400, 'invalid_request');
    }
    const fresh = await userAt(ip);
    expectFailure(await fresh.agent.post('/api/user/topup').send({ key: good }), 429, 'rate_limited');
    const elsewhere = await userAt('203.0.113.21');
    expect(expectOk(await elsewhere.agent.post('/api/user/topup').send({ key: good }))).toBe(100);
  });

  it('does not count successful redemptions', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const codes = await createCodes(admin, { name: 'many', quota: 10, count: 15 });
    const user = await userAt('203.0.113.30');
    for (const code of codes) expectOk(await user.agent.post('/api/user/topup').send({ key: code }));
    expect(await quotaOf(user.id)).toBe(150n);
    expect(await prisma.log.count({ where: { userId: user.id, type: 1 } })).toBe(15);
  });
});
