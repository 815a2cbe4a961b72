// docs/api.md 3.9.3 and 3.9.4, the API part: a key's rate limits and budget through /api/token, the
// budget spent in the current period, and an admin's control over a lower-role user's key limits.
import { chargeConsumeBatch } from '@modelgate/db';
import { periodSpanAt } from '@modelgate/schemas';
import { createApiKey, createChannel } from '@modelgate/testing';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { listenForInvalidations } from './support/invalidations';
import { loggedInUser, type LoggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

interface TokenView {
  id: number;
  user_id: number;
  name: string;
  rpm_limit: number;
  tpm_limit: number;
  max_concurrency: number;
  budget_usd: number | null;
  budget_period: string;
  budget_used_quota: number;
  limits_set_by_admin: boolean;
}

const NO_LIMITS = { rpm_limit: 0, tpm_limit: 0, max_concurrency: 0, budget_usd: null, budget_period: 'month', budget_used_quota: 0, limits_set_by_admin: false };

/** The account's clock set to `iso` (UTC): the budget period a view counts in. */
function setClock(iso: string): void {
  account.clock.advance(Date.parse(iso) - account.clock.now());
}

async function storedLimits(id: number) {
  const row = await prisma.token.findUniqueOrThrow({ where: { id } });
  return {
    rpm: row.rpmLimit,
    tpm: row.tpmLimit,
    concurrency: row.maxConcurrency,
    budget: row.budgetUsd?.toString() ?? null,
    period: row.budgetPeriod,
    setBy: row.limitsSetBy,
  };
}

describe('the limit and budget fields', () => {
  it('are created, listed, read and updated; a new key has none', async () => {
    const { agent } = await loggedInUser(account);
    const plain = expectOk(await agent.post('/api/token/').send({ name: 'plain' })) as TokenView;
    expect(plain).toMatchObject(NO_LIMITS);

    const created = expectOk(await agent.post('/api/token/').send({
      name: 'ci',
      rpm_limit: 60,
      tpm_limit: 100_000,
      max_concurrency: 4,
      budget_usd: 12.3456,
      budget_period: 'week',
    })) as TokenView;
    const limited = { rpm_limit: 60, tpm_limit: 100_000, max_concurrency: 4, budget_usd: 12.3456, budget_period: 'week', budget_used_quota: 0, limits_set_by_admin: false };
    expect(created).toMatchObject(limited);
    await expect(storedLimits(created.id)).resolves.toEqual({ rpm: 60, tpm: 100_000, concurrency: 4, budget: '12.3456', period: 'week', setBy: null });
    expect(expectOk(await agent.get(`/api/token/${created.id}`))).toMatchObject(limited);
    const listed = expectOk(await agent.get('/api/token/')) as { items: TokenView[] };
    expect(listed.items.find((token) => token.id === created.id)).toMatchObject(limited);

    // Only the fields sent change; 0 and null take a limit off.
    const updated = expectOk(await agent.put('/api/token/').send({ id: created.id, rpm_limit: 0, budget_usd: null })) as TokenView;
    expect(updated).toMatchObject({ rpm_limit: 0, tpm_limit: 100_000, max_concurrency: 4, budget_usd: null, budget_period: 'week' });
    expect(expectOk(await agent.put('/api/token/').send({ id: created.id, budget_usd: 0, budget_period: 'day' }))).toMatchObject({ budget_usd: 0, budget_period: 'day' });
  });

  it('publishes the change to the relays, as other key edits', async () => {
    const { agent, id } = await loggedInUser(account);
    const { token } = await createApiKey(prisma, id);
    const listener = await listenForInvalidations();
    try {
      await agent.put('/api/token/').send({ id: token.id, rpm_limit: 10, budget_usd: 1 }).expect(200);
      await expect(listener.next()).resolves.toEqual({ kind: 'token', tokenId: token.id, keyHash: token.keyHash });
    } finally {
      await listener.close();
    }
  });

  it.each([
    [{ rpm_limit: -1 }, /rpm_limit/],
    [{ rpm_limit: 1.5 }, /rpm_limit/],
    [{ rpm_limit: '60' }, /rpm_limit/],
    [{ rpm_limit: 1_000_001 }, /rpm_limit/],
    [{ tpm_limit: 2_000_000_001 }, /tpm_limit/],
    [{ tpm_limit: null }, /tpm_limit/],
    [{ max_concurrency: -3 }, /max_concurrency/],
    [{ max_concurrency: 100_001 }, /max_concurrency/],
    [{ budget_usd: -0.01 }, /budget_usd/],
    [{ budget_usd: 1.23456 }, /budget_usd: at most 4 decimal places/],
    [{ budget_usd: '5' }, /budget_usd/],
    [{ budget_usd: 1e10 }, /budget_usd/],
    [{ budget_period: 'year' }, /budget_period/],
    [{ budget_period: null }, /budget_period/],
    [{ budget_used_quota: 0 }, /budget_used_quota/],
    [{ limits_set_by: 1 }, /limits_set_by/],
    [{ limits_set_by_admin: false }, /limits_set_by_admin/],
  ])('rejects %j with 400 naming the field, on create and on update', async (fields, message) => {
    const { agent, id } = await loggedInUser(account);
    const { token } = await createApiKey(prisma, id, { rpmLimit: 5 });
    expectFailure(await agent.post('/api/token/').send({ name: 'x', ...fields }), 400, 'invalid_request', message);
    expectFailure(await agent.put('/api/token/').send({ id: token.id, ...fields }), 400, 'invalid_request', message);
    expect(await prisma.token.count()).toBe(1);
    await expect(storedLimits(token.id)).resolves.toMatchObject({ rpm: 5, tpm: 0, budget: null, period: 'month' });
  });
});

describe('budget_used_quota', () => {
  it('shows what the ledger charged the key in the current period', async () => {
    const user = await loggedInUser(account, { quota: 10_000_000 });
    const { token } = await createApiKey(prisma, user.id, { budgetUsd: 5 });
    const channel = await createChannel(prisma);
    await prisma.$transaction((tx) =>
      chargeConsumeBatch(
        tx,
        [1234, 766].map((charged, i) => ({
          user_id: user.id,
          created_at: new Date().toISOString().replace('Z', ''),
          username: user.username,
          token_id: token.id,
          token_name: token.name,
          model_name: 'gpt-4o-mini',
          charged,
          prompt_tokens: 10,
          completion_tokens: 5,
          use_time_ms: 100,
          first_byte_ms: null,
          is_stream: false,
          channel_id: channel.id,
          request_id: `req_budget_${i}`,
          other: {},
        })),
        new Map(),
      ),
    );
    expect(expectOk(await user.agent.get(`/api/token/${token.id}`))).toMatchObject({ budget_usd: 5, budget_period: 'month', budget_used_quota: 2000 });
    // A month later, before any new charge, the count belongs to a past period.
    account.clock.advance(32 * 24 * 3600 * 1000);
    expect(expectOk(await user.agent.get(`/api/token/${token.id}`))).toMatchObject({ budget_used_quota: 0 });
  });

  it.each([
    // Wednesday 16 January 2030: its day, its week (from Monday the 14th) and its month.
    ['day', '2030-01-16T00:00:00Z', '2030-01-15T00:00:00Z'],
    ['week', '2030-01-14T00:00:00Z', '2030-01-07T00:00:00Z'],
    ['month', '2030-01-01T00:00:00Z', '2029-12-01T00:00:00Z'],
  ])('counts a %s period from %s; a count kept since %s reads 0', async (period, current, stale) => {
    setClock('2030-01-16T13:45:00Z');
    const { agent, id } = await loggedInUser(account);
    const { token } = await createApiKey(prisma, id, { budgetPeriod: period, budgetUsedQuota: 4321, budgetPeriodStart: new Date(current) });
    expect(expectOk(await agent.get(`/api/token/${token.id}`))).toMatchObject({ budget_period: period, budget_used_quota: 4321 });
    await prisma.token.update({ where: { id: token.id }, data: { budgetPeriodStart: new Date(stale) } });
    expect(expectOk(await agent.get(`/api/token/${token.id}`))).toMatchObject({ budget_used_quota: 0 });
  });

  it('follows a change of period at once, without touching the stored count', async () => {
    setClock('2030-01-16T13:45:00Z');
    const { agent, id } = await loggedInUser(account);
    const { token } = await createApiKey(prisma, id, { budgetUsd: 10, budgetPeriod: 'month', budgetUsedQuota: 900, budgetPeriodStart: new Date('2030-01-01T00:00:00Z') });
    expect(expectOk(await agent.put('/api/token/').send({ id: token.id, budget_period: 'day' }))).toMatchObject({ budget_period: 'day', budget_used_quota: 0 });
    expect(await prisma.token.findUniqueOrThrow({ where: { id: token.id } })).toMatchObject({ budgetUsedQuota: 900n, budgetPeriodStart: new Date('2030-01-01T00:00:00Z') });
    expect(expectOk(await agent.put('/api/token/').send({ id: token.id, budget_period: 'month' }))).toMatchObject({ budget_used_quota: 900 });
  });

  it('starts periods where PostgreSQL date_trunc does (the ledger): weeks on Monday, UTC', async () => {
    const instants = ['2030-01-13T23:59:59.999Z', '2030-01-14T00:00:00Z', '2029-12-31T08:00:00Z', '2032-02-29T12:00:00Z', '2026-03-01T00:30:00Z'];
    for (const instant of instants) {
      for (const period of ['day', 'week', 'month'] as const) {
        const [row] = await prisma.$queryRaw<{ start: Date }[]>`SELECT date_trunc(${period}, ${new Date(instant)}::timestamptz AT TIME ZONE 'UTC') AS start`;
        expect({ instant, period, start: new Date(periodSpanAt(period, Date.parse(instant)).start).toISOString() }).toEqual({ instant, period, start: row?.start.toISOString() });
      }
    }
  });
});

describe("an admin's limits on a user's key", () => {
  let admin: LoggedInUser;
  let owner: LoggedInUser;
  let tokenId: number;

  beforeEach(async () => {
    admin = await loggedInUser(account, { role: ROLE.admin });
    owner = await loggedInUser(account);
    tokenId = (await createApiKey(prisma, owner.id, { name: 'owner-key', tpmLimit: 0 })).token.id;
  });

  it("lets an admin list, read and limit a lower-role user's key, which then shows as admin-set", async () => {
    const page = expectOk(await admin.agent.get(`/api/token/?user_id=${owner.id}&page_size=5`)) as { total: number; page_size: number; items: TokenView[] };
    expect({ total: page.total, page_size: page.page_size, names: page.items.map((token) => token.name) }).toEqual({ total: 1, page_size: 5, names: ['owner-key'] });
    expect(expectOk(await admin.agent.get(`/api/token/${tokenId}`))).toMatchObject({ user_id: owner.id, limits_set_by_admin: false });

    // A rename is not a limit: the owner stays free.
    expectOk(await admin.agent.put('/api/token/').send({ id: tokenId, name: 'renamed' }));
    await expect(storedLimits(tokenId)).resolves.toMatchObject({ setBy: null });

    const set = expectOk(await admin.agent.put('/api/token/').send({ id: tokenId, rpm_limit: 60, max_concurrency: 2, budget_usd: 10, budget_period: 'day' }));
    expect(set).toMatchObject({ name: 'renamed', user_id: owner.id, rpm_limit: 60, max_concurrency: 2, budget_usd: 10, budget_period: 'day', limits_set_by_admin: true });
    await expect(storedLimits(tokenId)).resolves.toEqual({ rpm: 60, tpm: 0, concurrency: 2, budget: '10', period: 'day', setBy: admin.id });
    expect(expectOk(await owner.agent.get(`/api/token/${tokenId}`))).toMatchObject({ rpm_limit: 60, limits_set_by_admin: true });
    // The admin's own list is its own keys.
    expect((expectOk(await admin.agent.get('/api/token/')) as { total: number }).total).toBe(0);
  });

  it('lets the owner lower them, but not raise or remove them, nor change the period', async () => {
    await admin.agent.put('/api/token/').send({ id: tokenId, rpm_limit: 60, max_concurrency: 2, budget_usd: 10, budget_period: 'day' }).expect(200);

    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ rpm_limit: 61 }, /^rpm_limit: an admin set this key's limits; you may only lower it \(1 to 60\)$/],
      [{ rpm_limit: 0 }, /^rpm_limit: /],
      [{ max_concurrency: 3 }, /^max_concurrency: /],
      [{ max_concurrency: 0 }, /^max_concurrency: /],
      [{ budget_usd: 10.0001 }, /^budget_usd: an admin set this key's limits; you may only lower it \(0 to 10\)$/],
      [{ budget_usd: null }, /^budget_usd: /],
      [{ budget_period: 'month' }, /^budget_period: an admin set this key's limits; you may not change it$/],
      // One refused field refuses the whole edit.
      [{ name: 'mine', rpm_limit: 30, budget_usd: 20 }, /^budget_usd: /],
    ];
    for (const [fields, message] of refusals) {
      expectFailure(await owner.agent.put('/api/token/').send({ id: tokenId, ...fields }), 403, 'forbidden', message);
    }
    await expect(storedLimits(tokenId)).resolves.toEqual({ rpm: 60, tpm: 0, concurrency: 2, budget: '10', period: 'day', setBy: admin.id });
    expect(await prisma.token.findUniqueOrThrow({ where: { id: tokenId } })).toMatchObject({ name: 'owner-key' });

    // Tighter, or the same, is fine; a limit that was none may be set; other fields stay the owner's.
    const lowered = expectOk(await owner.agent.put('/api/token/').send({
      id: tokenId,
      name: 'mine',
      rpm_limit: 30,
      tpm_limit: 5000,
      max_concurrency: 2,
      budget_usd: 2.5,
      budget_period: 'day',
      status: 2,
    }));
    expect(lowered).toMatchObject({ name: 'mine', status: 2, rpm_limit: 30, tpm_limit: 5000, max_concurrency: 2, budget_usd: 2.5, limits_set_by_admin: true });
    await expect(storedLimits(tokenId)).resolves.toEqual({ rpm: 30, tpm: 5000, concurrency: 2, budget: '2.5', period: 'day', setBy: admin.id });
    // Lowered values are the new ceiling.
    expectFailure(await owner.agent.put('/api/token/').send({ id: tokenId, rpm_limit: 60 }), 403, 'forbidden', /rpm_limit/);
    expectFailure(await owner.agent.put('/api/token/').send({ id: tokenId, tpm_limit: 0 }), 403, 'forbidden', /tpm_limit/);

    // The admin may raise them again.
    expect(expectOk(await admin.agent.put('/api/token/').send({ id: tokenId, rpm_limit: 600, budget_usd: null }))).toMatchObject({ rpm_limit: 600, budget_usd: null });
    expect(expectOk(await owner.agent.put('/api/token/').send({ id: tokenId, budget_usd: 1 }))).toMatchObject({ budget_usd: 1 });
  });

  it("judges a group set by an admin by the key's owner", async () => {
    expectFailure(await admin.agent.put('/api/token/').send({ id: tokenId, group: 'vip' }), 400, 'invalid_request', /group/);
  });

  it('leaves admins free on their own keys, whoever set the limits', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    const { token } = await createApiKey(prisma, admin.id);
    await root.agent.put('/api/token/').send({ id: token.id, rpm_limit: 10, budget_period: 'week' }).expect(200);
    await expect(storedLimits(token.id)).resolves.toMatchObject({ rpm: 10, period: 'week', setBy: root.id });
    expect(expectOk(await admin.agent.put('/api/token/').send({ id: token.id, rpm_limit: 0, budget_period: 'month' }))).toMatchObject({ rpm_limit: 0, budget_period: 'month' });
  });

  it('hides keys of an equal or higher role from an admin, as unknown ids (404)', async () => {
    const otherAdmin = await loggedInUser(account, { role: ROLE.admin });
    const root = await loggedInUser(account, { role: ROLE.root });
    for (const target of [otherAdmin, root]) {
      const { token } = await createApiKey(prisma, target.id, { name: 'high' });
      expectFailure(await admin.agent.get(`/api/token/?user_id=${target.id}`), 404, 'not_found');
      expectFailure(await admin.agent.get(`/api/token/${token.id}`), 404, 'not_found');
      expectFailure(await admin.agent.put('/api/token/').send({ id: token.id, rpm_limit: 1 }), 404, 'not_found');
      await expect(storedLimits(token.id)).resolves.toMatchObject({ rpm: 0, setBy: null });
    }
    expectFailure(await admin.agent.get('/api/token/?user_id=999999'), 404, 'not_found');
    // Root reaches an admin's keys.
    expect((expectOk(await root.agent.get(`/api/token/?user_id=${otherAdmin.id}`)) as { total: number }).total).toBe(1);
  });

  it("refuses user_id to a non-admin (403), and another user's key stays a 404", async () => {
    const other = await loggedInUser(account);
    expectFailure(await other.agent.get(`/api/token/?user_id=${owner.id}`), 403, 'forbidden', /user_id/);
    expectFailure(await other.agent.get(`/api/token/${tokenId}`), 404, 'not_found');
    expectFailure(await other.agent.put('/api/token/').send({ id: tokenId, rpm_limit: 1 }), 404, 'not_found');
    // Naming oneself is the own list; an empty parameter is no parameter.
    expect((expectOk(await owner.agent.get(`/api/token/?user_id=${owner.id}`)) as { total: number }).total).toBe(1);
    expect((expectOk(await owner.agent.get('/api/token/?user_id=')) as { total: number }).total).toBe(1);
    expectFailure(await admin.agent.get('/api/token/?user_id=abc'), 400, 'invalid_request', /user_id/);
  });
});
