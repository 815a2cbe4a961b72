import { ledgerMismatches } from '@modelgate/db';
import { createUser, TEST_PASSWORD } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { listenForInvalidations } from './support/invalidations';
import { loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

describe('users administration', () => {
  it('lists and reads users for admins, with pagination', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    for (let i = 0; i < 3; i++) await createUser(prisma, { remark: `r${i}` });
    const page = expectOk(await admin.agent.get('/api/user/?p=1&page_size=2')) as { total: number; items: { id: number; remark: string }[] };
    expect(page).toMatchObject({ total: 3, page: 1, page_size: 2 });
    expect(page.items).toHaveLength(2);
    const [target] = page.items as [{ id: number; remark: string }];
    expect(expectOk(await admin.agent.get(`/api/user/${target.id}`))).toMatchObject({ id: target.id, remark: target.remark });
    expectFailure(await admin.agent.get('/api/user/987654'), 404, 'not_found');
  });

  it('lists only users of a lower role to an admin, and everyone to root', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const otherAdmin = await createUser(prisma, { role: ROLE.admin });
    const users = [await createUser(prisma), await createUser(prisma)];
    type UserPage = { total: number; items: { id: number; role: number }[] };
    const seenByAdmin = expectOk(await admin.agent.get('/api/user/?p=1&page_size=100')) as UserPage;
    expect(seenByAdmin.total).toBe(2);
    expect(seenByAdmin.items.map((user) => user.id).sort()).toEqual(users.map((user) => user.id).sort());
    const seenByRoot = expectOk(await root.agent.get('/api/user/?p=1&page_size=100')) as UserPage;
    expect(seenByRoot.total).toBe(5);
    expect(seenByRoot.items.map((user) => user.id).sort()).toEqual([root.id, admin.id, otherAdmin.id, ...users.map((user) => user.id)].sort());
  });

  it('keeps users administration away from common users', async () => {
    const user = await loggedInUser(account);
    const other = await createUser(prisma);
    expectFailure(await user.agent.get('/api/user/'), 403, 'forbidden');
    expectFailure(await user.agent.get(`/api/user/${other.id}`), 403, 'forbidden');
    expectFailure(await user.agent.put('/api/user/').send({ id: other.id, quota: 5 }), 403, 'forbidden');
    expectFailure(await user.agent.post('/api/user/manage').send({ id: other.id, action: 'disable' }), 403, 'forbidden');
    expectFailure(await request(app).get('/api/user/'), 401, 'unauthorized');
  });

  it('books a quota change as one manage log row with the signed delta', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const user = await createUser(prisma, { quota: 1000 });
    const listener = await listenForInvalidations();
    try {
      expect(expectOk(await admin.agent.put('/api/user/').send({ id: user.id, quota: 1500, remark: 'vip soon', group: 'vip' })))
        .toMatchObject({ quota: 1500, remark: 'vip soon', group: 'vip' });
      await expect(listener.next()).resolves.toEqual({ kind: 'user', userId: user.id });
    } finally {
      await listener.close();
    }
    await admin.agent.put('/api/user/').send({ id: user.id, quota: 200 }).expect(200);
    await admin.agent.put('/api/user/').send({ id: user.id, display_name: 'no quota change' }).expect(200);
    const manageRows = await prisma.log.findMany({ where: { userId: user.id, type: 3 }, orderBy: { id: 'asc' } });
    expect(manageRows.map((row) => row.quota)).toEqual([500n, -1300n]);
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it.each([
    [{ id: 1, quota: -1 }, /quota/],
    [{ id: 1, quota: 1.5 }, /quota/],
    [{ id: 1, role: 100 }, /role/],
    [{ id: 1, password_hash: 'x' }, /password_hash/],
    [{ quota: 5 }, /id/],
    [{ id: 1, group: 'has space' }, /group/],
  ])('rejects admin update %j with 400', async (body, field) => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expectFailure(await admin.agent.put('/api/user/').send(body), 400, 'invalid_request', field);
  });

  it('lets admins act only on users of a lower role, and root on anyone but itself', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const otherAdmin = await createUser(prisma, { role: ROLE.admin });
    const user = await createUser(prisma);
    expectFailure(await admin.agent.put('/api/user/').send({ id: otherAdmin.id, quota: 1 }), 403, 'forbidden');
    expectFailure(await admin.agent.post('/api/user/manage').send({ id: root.id, action: 'disable' }), 403, 'forbidden');
    expectFailure(await admin.agent.get(`/api/user/${root.id}`), 403, 'forbidden');
    expectFailure(await admin.agent.post('/api/user/manage').send({ id: user.id, action: 'promote' }), 403, 'forbidden');
    expectFailure(await root.agent.post('/api/user/manage').send({ id: root.id, action: 'disable' }), 403, 'forbidden');
    expectFailure(await root.agent.put('/api/user/').send({ id: root.id, quota: 10 ** 9, remark: 'mine' }), 403, 'forbidden');
    expect(expectOk(await root.agent.post('/api/user/manage').send({ id: user.id, action: 'promote' }))).toEqual({ role: ROLE.admin, status: 1 });
    expectFailure(await root.agent.post('/api/user/manage').send({ id: user.id, action: 'promote' }), 400, 'invalid_request');
    expect(expectOk(await root.agent.post('/api/user/manage').send({ id: otherAdmin.id, action: 'demote' }))).toEqual({ role: ROLE.user, status: 1 });
    expectFailure(await root.agent.post('/api/user/manage').send({ id: otherAdmin.id, action: 'demote' }), 400, 'invalid_request');
    expectOk(await admin.agent.put('/api/user/').send({ id: otherAdmin.id, quota: 7 }));
  });

  it('disables, enables and deletes users; a disabled user is locked out at once', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const victim = await loggedInUser(account);
    expect(expectOk(await admin.agent.post('/api/user/manage').send({ id: victim.id, action: 'disable' }))).toEqual({ role: 1, status: 2 });
    expectFailure(await victim.agent.get('/api/user/self'), 403, 'user_disabled');
    const relogin = await request(app).post('/api/user/login').send({ username: victim.username, password: TEST_PASSWORD });
    expectFailure(relogin, 403, 'user_disabled');
    expectOk(await admin.agent.post('/api/user/manage').send({ id: victim.id, action: 'enable' }));
    await victim.agent.get('/api/user/self').expect(200);
    expectOk(await admin.agent.post('/api/user/manage').send({ id: victim.id, action: 'delete' }));
    expectFailure(await victim.agent.get('/api/user/self'), 401, 'unauthorized');
    expectFailure(await admin.agent.get(`/api/user/${victim.id}`), 404, 'not_found');
    expectFailure(await admin.agent.post('/api/user/manage').send({ id: victim.id, action: 'enable' }), 404, 'not_found');
    expectFailure(await admin.agent.post('/api/user/manage').send({ id: victim.id, action: 'explode' }), 400, 'invalid_request', /action/);
  });

  it('lets root set its own quota, booked as a manage log row', async () => {
    const root = await loggedInUser(account, { role: ROLE.root, quota: 100 });
    expect(expectOk(await root.agent.put('/api/user/').send({ id: root.id, quota: 10 ** 9 }))).toMatchObject({ id: root.id, quota: 10 ** 9 });
    const rows = await prisma.log.findMany({ where: { userId: root.id, type: 3 } });
    expect(rows.map((row) => row.quota)).toEqual([BigInt(10 ** 9 - 100)]);
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });
});

describe('POST /api/user/ (admin user creation)', () => {
  it('creates a common user who can log in, booking the starting quota as one manage log row', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const created = expectOk(
      await admin.agent.post('/api/user/').send({ username: 'new_user', password: 'long enough', display_name: 'New', group: 'vip', quota: 5000 }),
    ) as { id: number };
    const view = expectOk(await admin.agent.get(`/api/user/${created.id}`));
    expect(created).toEqual(view);
    expect(view).toMatchObject({ username: 'new_user', display_name: 'New', group: 'vip', quota: 5000, role: ROLE.user, status: 1 });
    const rows = await prisma.log.findMany({ where: { userId: created.id } });
    expect(rows).toEqual([expect.objectContaining({ type: 3, quota: 5000n, content: expect.stringContaining(admin.username) })]);
    expect(await ledgerMismatches(prisma)).toEqual([]);
    const login = await request(app).post('/api/user/login').send({ username: 'new_user', password: 'long enough' });
    expect(expectOk(login)).toMatchObject({ id: created.id, role: ROLE.user });
  });

  it('writes no log row for a user created without quota', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const created = expectOk(await admin.agent.post('/api/user/').send({ username: 'plain', password: 'long enough', quota: 0 })) as { id: number };
    expect(created).toMatchObject({ quota: 0, group: 'default', role: ROLE.user });
    expect(await prisma.log.count({ where: { userId: created.id } })).toBe(0);
  });

  it('creates admins only for root, and never a root', async () => {
    const root = await loggedInUser(account, { role: ROLE.root });
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expectFailure(await admin.agent.post('/api/user/').send({ username: 'second_admin', password: 'long enough', role: ROLE.admin }), 403, 'forbidden');
    expect(await prisma.user.count({ where: { username: 'second_admin' } })).toBe(0);
    const created = expectOk(await root.agent.post('/api/user/').send({ username: 'second_admin', password: 'long enough', role: ROLE.admin }));
    expect(created).toMatchObject({ role: ROLE.admin });
    expectFailure(await root.agent.post('/api/user/').send({ username: 'another_root', password: 'long enough', role: ROLE.root }), 400, 'invalid_request', /role/);
  });

  it('refuses a taken username with 409', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const existing = await createUser(prisma);
    expectFailure(await admin.agent.post('/api/user/').send({ username: existing.username, password: 'long enough' }), 409, 'conflict');
  });

  it.each([
    [{ password: 'long enough' }, /username/],
    [{ username: 'ab', password: 'long enough' }, /username/],
    [{ username: 'has space', password: 'long enough' }, /username/],
    [{ username: 'valid_name', password: 'short' }, /password/],
    [{ username: 'valid_name', password: 'x'.repeat(65) }, /password/],
    [{ username: 'valid_name', password: 'long enough', quota: -1 }, /quota/],
    [{ username: 'valid_name', password: 'long enough', group: 'has space' }, /group/],
    [{ username: 'valid_name', password: 'long enough', role: 5 }, /role/],
    [{ username: 'valid_name', password: 'long enough', email: 'a@b.c' }, /email/],
  ])('rejects creation body %j with 400', async (body, field) => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expectFailure(await admin.agent.post('/api/user/').send(body), 400, 'invalid_request', field);
  });

  it('is for admins only', async () => {
    const user = await loggedInUser(account);
    expectFailure(await user.agent.post('/api/user/').send({ username: 'valid_name', password: 'long enough' }), 403, 'forbidden');
    expectFailure(await request(app).post('/api/user/').send({ username: 'valid_name', password: 'long enough' }), 401, 'unauthorized');
  });
});
