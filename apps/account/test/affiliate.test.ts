import { ledgerMismatches } from '@modelgate/db';
import { setOption } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { logIn, loggedInUser } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

describe('affiliate codes and registration bonuses', () => {
  it('creates an aff_code on first request and keeps it', async () => {
    const { agent, id } = await loggedInUser(account);
    const code = expectOk(await agent.get('/api/user/aff')) as string;
    expect(code).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(expectOk(await agent.get('/api/user/aff'))).toBe(code);
    expect((await prisma.user.findUniqueOrThrow({ where: { id } })).affCode).toBe(code);
  });

  it('credits inviter and invitee per the options, with ledger rows', async () => {
    await setOption(prisma, 'QuotaForNewUser', '100');
    await setOption(prisma, 'QuotaForInviter', '700');
    await setOption(prisma, 'QuotaForInvitee', '50');
    const inviter = await loggedInUser(account);
    const code = expectOk(await inviter.agent.get('/api/user/aff')) as string;

    const plain = expectOk(await request(app).post('/api/user/register').send({ username: 'plain_user', password: 'pa55word!' })) as { id: number };
    const invited = expectOk(await request(app).post('/api/user/register').send({ username: 'invited_user', password: 'pa55word!', aff_code: code })) as { id: number };
    // An unknown code registers the user without any invitation bonus, as new-api does.
    const stray = expectOk(await request(app).post('/api/user/register').send({ username: 'stray_user', password: 'pa55word!', aff_code: 'nope' })) as { id: number };

    const users = await prisma.user.findMany({ where: { id: { in: [inviter.id, plain.id, invited.id, stray.id] } } });
    const byId = new Map(users.map((u) => [u.id, u]));
    expect(byId.get(plain.id)).toMatchObject({ quota: 100n, inviterId: null });
    expect(byId.get(stray.id)).toMatchObject({ quota: 100n, inviterId: null });
    expect(byId.get(invited.id)).toMatchObject({ quota: 150n, inviterId: inviter.id });
    expect(byId.get(inviter.id)).toMatchObject({ quota: 0n, affCount: 1, affQuota: 700n, affHistoryQuota: 700n });

    const invitedLogs = await prisma.log.findMany({ where: { userId: invited.id } });
    expect(invitedLogs.map((row) => row.quota)).toEqual([150n]);
    const invitedAgent = await logIn(app, 'invited_user', 'pa55word!');
    expect(expectOk(await invitedAgent.agent.get('/api/user/self'))).toMatchObject({ quota: 150, inviter_id: inviter.id });
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('writes no log row when there is no bonus', async () => {
    await request(app).post('/api/user/register').send({ username: 'no_bonus', password: 'pa55word!' }).expect(200);
    expect(await prisma.log.count()).toBe(0);
  });
});

describe('POST /api/user/aff_transfer', () => {
  const UNIT = 500_000;

  it('moves affiliate quota to quota and books it in the ledger', async () => {
    const { agent, id } = await loggedInUser(account, { affQuota: 3 * UNIT, quota: 10 });
    expect(expectOk(await agent.post('/api/user/aff_transfer').send({ quota: 2 * UNIT }))).toEqual({ quota: 2 * UNIT + 10, aff_quota: UNIT });
    const rows = await prisma.log.findMany({ where: { userId: id }, orderBy: { id: 'asc' } });
    expect(rows.map((row) => row.quota)).toEqual([10n, BigInt(2 * UNIT)]);
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it.each([
    ['below QuotaPerUnit', { quota: UNIT - 1 }],
    ['above aff_quota', { quota: 2 * UNIT }],
    ['not an integer', { quota: 1.5 * UNIT }],
    ['a string', { quota: String(UNIT) }],
    ['with an extra field', { quota: UNIT, user_id: 1 }],
  ])('rejects an amount %s with 400', async (_label, body) => {
    const { agent, id } = await loggedInUser(account, { affQuota: UNIT });
    expectFailure(await agent.post('/api/user/aff_transfer').send(body), 400, 'invalid_request');
    expect(await prisma.user.findUniqueOrThrow({ where: { id } })).toMatchObject({ quota: 0n, affQuota: BigInt(UNIT) });
  });

  it('never moves more than there is under 10 concurrent transfers', async () => {
    const { agent, id } = await loggedInUser(account, { affQuota: 3 * UNIT + 5 });
    const results = await Promise.all(Array.from({ length: 10 }, () => agent.post('/api/user/aff_transfer').send({ quota: UNIT })));
    expect(results.filter((res) => res.status === 200)).toHaveLength(3);
    expect(results.filter((res) => res.status === 400)).toHaveLength(7);
    expect(await prisma.user.findUniqueOrThrow({ where: { id } })).toMatchObject({ quota: BigInt(3 * UNIT), affQuota: 5n });
    expect(await prisma.log.count({ where: { userId: id } })).toBe(3);
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('follows QuotaPerUnit', async () => {
    await setOption(prisma, 'QuotaPerUnit', '1000');
    const { agent } = await loggedInUser(account, { affQuota: 5000 });
    expect(expectOk(await agent.post('/api/user/aff_transfer').send({ quota: 1000 }))).toEqual({ quota: 1000, aff_quota: 4000 });
  });
});
