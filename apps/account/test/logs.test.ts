import type { PrismaClient } from '@modelgate/db';
import { createUser } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { loggedInUser, ROLE } from './support/users';
import { consumeLogRow, LOGS_T0 } from './support/logs';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

interface LogItem {
  id: number;
  created_at: number;
  type: number;
  model_name: string;
  quota: number;
  username?: string;
  channel_id?: number | null;
}
interface LogPage {
  page: number;
  page_size: number;
  total: number;
  items: LogItem[];
}

const T0 = LOGS_T0;

/** Consume rows as the relay writes them, one per model, a day apart from T0. */
async function writeLogs(db: PrismaClient, user: { id: number; username: string }, models: string[]) {
  for (const [day, model] of models.entries()) {
    await db.log.create({ data: consumeLogRow(user, T0 + day * 86_400, { modelName: model, requestId: `req-${user.id}-${day}` }) });
  }
}

describe('GET /api/log/self', () => {
  it('pages the own log rows with the fields of docs/api.md 3.2, newest first', async () => {
    const user = await loggedInUser(account);
    await writeLogs(prisma, user, ['gpt-4o-mini', 'gemini-2.5-flash', 'gpt-4o-mini']);
    const page = expectOk(await user.agent.get('/api/log/self?p=1&page_size=2')) as LogPage;
    expect(page).toMatchObject({ page: 1, page_size: 2, total: 3 });
    expect(page.items[0]).toEqual({
      id: expect.any(Number),
      created_at: T0 + 2 * 86_400,
      type: 2,
      content: '',
      model_name: 'gpt-4o-mini',
      token_name: 'ci',
      quota: -100,
      prompt_tokens: 10,
      completion_tokens: 5,
      use_time_ms: 321,
      is_stream: true,
      request_id: `req-${user.id}-2`,
      other: {},
    });
    const [newest, older] = page.items;
    expect(newest?.id).toBeGreaterThan(older?.id ?? Number.POSITIVE_INFINITY);
    const second = expectOk(await user.agent.get('/api/log/self?p=2&page_size=2')) as LogPage;
    expect(second.items).toHaveLength(1);
  });

  it('shows the ratios and every token count a consume row was charged from, not the relay\'s bookkeeping', async () => {
    const user = await loggedInUser(account);
    const billing = {
      group: 'default',
      model_ratio: 1.5,
      completion_ratio: 5,
      group_ratio: 1,
      cache_ratio: 0.1,
      cache_creation_ratio: 1.25,
      cache_tokens: 800,
      cache_creation_tokens: 100,
      reasoning_tokens: 0,
    };
    await prisma.log.create({
      data: { userId: user.id, username: user.username, type: 2, quota: -1_000, promptTokens: 1_000, other: { entry: 'relay-1:42', ...billing } },
    });
    const [item] = (expectOk(await user.agent.get('/api/log/self')) as { items: { other: unknown }[] }).items;
    expect(item?.other).toEqual(billing);
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const [adminItem] = (expectOk(await admin.agent.get('/api/log/')) as { items: { other: unknown }[] }).items;
    expect(adminItem?.other).toEqual(billing);
  });

  it('shows what a media call had and its units, the long-context tier and the server tools (docs/api.md 2.11, 2.14)', async () => {
    const user = await loggedInUser(account);
    const media = { group: 'default', model_ratio: 0, completion_ratio: 0, group_ratio: 1, characters: 1_234, units: 1.234, unit: '1k_characters', usd_per_unit: 0.015 };
    const tools = {
      group: 'default',
      model_ratio: 3,
      completion_ratio: 3.75,
      group_ratio: 1,
      tier_above_prompt_tokens: 200_000,
      server_tools: { web_search: { count: 2, usd_each: 0.01, quota: 10_000 } },
    };
    await prisma.log.create({ data: { userId: user.id, username: user.username, type: 2, quota: -9_255, modelName: 'tts-1', other: { entry: 'relay-1:43', ...media } } });
    await prisma.log.create({ data: { userId: user.id, username: user.username, type: 2, quota: -20_000, modelName: 'claude-sonnet-4-5', other: { entry: 'relay-1:44', ...tools } } });
    const { items } = expectOk(await user.agent.get('/api/log/self')) as { items: { other: unknown; content: string }[] };
    // Rows as the relay writes them, lean: the counts of 0 and the unused cache ratios are shown as 0 and 1.
    const unused = { cache_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0, cache_ratio: 1, cache_creation_ratio: 1 };
    expect(items.map((item) => item.other)).toEqual([{ ...unused, ...tools }, { ...unused, ...media }]);
    // Their content is written from `other` (docs/api.md 3.2).
    expect(items.map((item) => item.content)).toEqual([
      'model ratio 3, completion ratio 3.75, group ratio 1, long-context tier above 200000 prompt tokens, web_search 2 x USD 0.01 = 10000',
      '1.234 x USD 0.015 per 1,000 characters, group ratio 1',
    ]);
  });

  it('filters by type, model name, key name and time range (unix seconds, inclusive)', async () => {
    const user = await loggedInUser(account);
    await writeLogs(prisma, user, ['gpt-4o-mini', 'gemini-2.5-flash', 'gpt-4o-mini', 'gpt-4o-mini']);
    await prisma.log.create({ data: { userId: user.id, username: user.username, type: 3, quota: 5, createdAt: new Date(T0 * 1000) } });
    const query = async (q: string) => (expectOk(await user.agent.get(`/api/log/self?${q}`)) as LogPage).total;
    expect(await query('type=2')).toBe(4);
    expect(await query('type=3')).toBe(1);
    expect(await query('model_name=gpt-4o-mini')).toBe(3);
    expect(await query(`start_timestamp=${T0 + 86_400}&end_timestamp=${T0 + 2 * 86_400}`)).toBe(2);
    expect(await query(`type=2&model_name=gpt-4o-mini&start_timestamp=${T0 + 1}`)).toBe(2);
    expect(await query('type=&model_name=')).toBe(5);
    // Every consume row here came through the key "ci"; the manage row through none.
    expect(await query('token_name=ci')).toBe(4);
    expect(await query('token_name=other')).toBe(0);
    expectFailure(await user.agent.get('/api/log/self?type=9'), 400, 'invalid_request', /type/);
    expectFailure(await user.agent.get('/api/log/self?type=-1'), 400, 'invalid_request', /type/);
    expectFailure(await user.agent.get('/api/log/self?start_timestamp=yesterday'), 400, 'invalid_request', /start_timestamp/);
  });

  it('reads type=0 as all types, as new-api\'s UI sends it', async () => {
    const user = await loggedInUser(account);
    await writeLogs(prisma, user, ['gpt-4o-mini', 'gemini-2.5-flash']);
    await prisma.log.create({ data: { userId: user.id, username: user.username, type: 1, quota: 500, createdAt: new Date(T0 * 1000) } });
    const page = expectOk(await user.agent.get('/api/log/self?type=0&p=1&page_size=10')) as LogPage;
    expect(page.total).toBe(3);
    expect(page.items.map((item) => item.type).sort()).toEqual([1, 2, 2]);
  });

  it("never shows another user's rows (BOLA)", async () => {
    const alice = await loggedInUser(account);
    const bob = await loggedInUser(account);
    await writeLogs(prisma, alice, ['gpt-4o-mini']);
    expect(expectOk(await bob.agent.get('/api/log/self'))).toMatchObject({ total: 0, items: [] });
    expect(expectOk(await bob.agent.get(`/api/log/self?username=${alice.username}`))).toMatchObject({ total: 0 });
    expectFailure(await request(app).get('/api/log/self'), 401, 'unauthorized');
  });
});

describe('GET /api/log/ (admin)', () => {
  it("lists every user's rows with username and channel id, filterable by username", async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const alice = await createUser(prisma);
    const bob = await createUser(prisma);
    await writeLogs(prisma, alice, ['gpt-4o-mini', 'gpt-4o']);
    await writeLogs(prisma, bob, ['gemini-2.5-pro']);
    const all = expectOk(await admin.agent.get('/api/log/')) as LogPage;
    expect(all.total).toBe(3);
    expect(all.items[0]).toMatchObject({ username: bob.username, channel_id: 7, user_id: bob.id });
    expect((expectOk(await admin.agent.get(`/api/log/?username=${alice.username}`)) as LogPage).total).toBe(2);
    expect((expectOk(await admin.agent.get('/api/log/?model_name=gpt-4o')) as LogPage).total).toBe(1);
    expect((expectOk(await admin.agent.get(`/api/log/?type=0&username=${alice.username}`)) as LogPage).total).toBe(2);
  });

  it('is for admins only', async () => {
    const user = await loggedInUser(account);
    expectFailure(await user.agent.get('/api/log/'), 403, 'forbidden');
  });

  it('refuses page_size above 100 (docs/api.md 1.1)', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expectFailure(await admin.agent.get('/api/log/?page_size=1000'), 400, 'invalid_request', /^page_size: /);
    expect(expectOk(await admin.agent.get('/api/log/?page_size=100'))).toMatchObject({ page_size: 100, page: 1 });
  });
});
