import { chargeConsumeBatch, type ConsumeRow } from '@modelgate/db';
import { createApiKey, createChannel } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { type LoggedInUser, loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

interface UsageItem {
  bucket: number;
  model_name: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  quota: number;
  username?: string;
}
interface UsageReport {
  granularity: 'hour' | 'day';
  start_timestamp: number;
  end_timestamp: number;
  items: UsageItem[];
}

const HOUR = 3_600;
const DAY = 86_400;
/** Midnight UTC: every charge below is placed relative to it. */
const T0 = Date.UTC(2026, 0, 1) / 1000;

interface Charge {
  at: number;
  model: string;
  charged: number;
}

let sequence = 0;

/** Books the charges as the relay's ledger writer does: one consume batch through chargeConsumeBatch. */
async function charge(user: LoggedInUser, charges: Charge[]): Promise<void> {
  const { token } = await createApiKey(prisma, user.id);
  const channel = await createChannel(prisma);
  const rows = charges.map(({ at, model, charged }): ConsumeRow => {
    sequence += 1;
    return {
      user_id: user.id,
      created_at: new Date(at * 1000).toISOString().replace('Z', ''),
      username: user.username,
      token_id: token.id,
      token_name: token.name,
      model_name: model,
      charged,
      prompt_tokens: 10,
      completion_tokens: 5,
      use_time_ms: 100,
      first_byte_ms: null,
      is_stream: false,
      channel_id: channel.id,
      request_id: `req_${sequence}`,
      other: {},
    };
  });
  await prisma.$transaction((tx) => chargeConsumeBatch(tx, rows, new Map()));
}

const usage = (res: request.Response) => expectOk(res) as UsageReport;
const item = (bucket: number, model: string, requests: number, quota: number, username?: string): UsageItem => ({
  bucket,
  model_name: model,
  requests,
  prompt_tokens: 10 * requests,
  completion_tokens: 5 * requests,
  quota,
  ...(username === undefined ? {} : { username }),
});

/** Alice: two hours of the first day and one hour of the second; Bob: one call in the first hour. */
async function twoUsers() {
  const alice = await loggedInUser(account, { username: 'alice', quota: 1_000_000 });
  const bob = await loggedInUser(account, { username: 'bob', quota: 1_000_000 });
  await charge(alice, [
    { at: T0 + 10, model: 'gpt-a', charged: 100 },
    { at: T0 + HOUR - 1, model: 'gpt-a', charged: 50 },
    { at: T0 + HOUR, model: 'gpt-b', charged: 30 },
    { at: T0 + DAY + 2 * HOUR, model: 'gpt-a', charged: 20 },
  ]);
  await charge(bob, [{ at: T0 + 60, model: 'gpt-a', charged: 7 }]);
  return { alice, bob };
}

const range = (start: number, end: number, granularity: 'hour' | 'day') => `start_timestamp=${start}&end_timestamp=${end}&granularity=${granularity}`;

describe('GET /api/data/self', () => {
  it('hourly: the own charges summed per hour and model, sorted by bucket then model; nobody else\'s', async () => {
    const { alice } = await twoUsers();
    const report = usage(await alice.agent.get(`/api/data/self?${range(T0, T0 + 2 * DAY - 1, 'hour')}`));
    expect(report).toEqual({
      granularity: 'hour',
      start_timestamp: T0,
      end_timestamp: T0 + 2 * DAY - 1,
      items: [item(T0, 'gpt-a', 2, 150), item(T0 + HOUR, 'gpt-b', 1, 30), item(T0 + DAY + 2 * HOUR, 'gpt-a', 1, 20)],
    });
  });

  it('daily: the hours summed by UTC day', async () => {
    const { alice, bob } = await twoUsers();
    const query = `/api/data/self?${range(T0, T0 + 2 * DAY - 1, 'day')}`;
    expect(usage(await alice.agent.get(query)).items).toEqual([item(T0, 'gpt-a', 2, 150), item(T0, 'gpt-b', 1, 30), item(T0 + DAY, 'gpt-a', 1, 20)]);
    expect(usage(await bob.agent.get(query)).items).toEqual([item(T0, 'gpt-a', 1, 7)]);
  });

  it('range edges: whole buckets from the one holding start_timestamp to the one holding end_timestamp', async () => {
    const { alice } = await twoUsers();
    // One second on each side of the first hour's end: both hours, whole.
    const edges = usage(await alice.agent.get(`/api/data/self?${range(T0 + HOUR - 1, T0 + HOUR, 'hour')}`));
    expect(edges).toMatchObject({ start_timestamp: T0, end_timestamp: T0 + 2 * HOUR - 1 });
    expect(edges.items).toEqual([item(T0, 'gpt-a', 2, 150), item(T0 + HOUR, 'gpt-b', 1, 30)]);
    // Ending one second before the second day's 02:00 leaves that hour out.
    const before = usage(await alice.agent.get(`/api/data/self?${range(T0 + HOUR, T0 + DAY + 2 * HOUR - 1, 'hour')}`));
    expect(before.items).toEqual([item(T0 + HOUR, 'gpt-b', 1, 30)]);
    // A day bucket is whole even when the range starts within it.
    const secondDay = usage(await alice.agent.get(`/api/data/self?${range(T0 + DAY + 3 * HOUR, T0 + DAY + 3 * HOUR, 'day')}`));
    expect(secondDay).toEqual({ granularity: 'day', start_timestamp: T0 + DAY, end_timestamp: T0 + 2 * DAY - 1, items: [item(T0 + DAY, 'gpt-a', 1, 20)] });
    // A range with no charges: no items.
    expect(usage(await alice.agent.get(`/api/data/self?${range(T0 + 3 * DAY, T0 + 4 * DAY, 'day')}`)).items).toEqual([]);
  });

  it('defaults: granularity day over the last 7 days, today included', async () => {
    const alice = await loggedInUser(account, { quota: 1_000_000 });
    const now = Math.floor(account.clock.now() / 1000);
    const today = now - (now % DAY);
    await charge(alice, [
      { at: now, model: 'gpt-a', charged: 3 },
      { at: today - 6 * DAY, model: 'gpt-a', charged: 4 },
      { at: today - 6 * DAY - 1, model: 'gpt-a', charged: 5 },
    ]);
    const report = usage(await alice.agent.get('/api/data/self'));
    expect(report).toEqual({ granularity: 'day', start_timestamp: today - 6 * DAY, end_timestamp: today + DAY - 1, items: [item(today - 6 * DAY, 'gpt-a', 1, 4), item(today, 'gpt-a', 1, 3)] });
    // Empty parameters count as absent.
    expect(usage(await alice.agent.get('/api/data/self?start_timestamp=&end_timestamp=&granularity='))).toEqual(report);
  });

  it('read from the hourly aggregates: the consume rows are not scanned', async () => {
    const { alice } = await twoUsers();
    await prisma.log.deleteMany({ where: { userId: alice.id } });
    expect(usage(await alice.agent.get(`/api/data/self?${range(T0, T0 + DAY - 1, 'day')}`)).items).toEqual([item(T0, 'gpt-a', 2, 150), item(T0, 'gpt-b', 1, 30)]);
  });

  it('an access token works as a session does; unauthenticated: 401', async () => {
    const { alice } = await twoUsers();
    const accessToken = expectOk(await alice.agent.get('/api/user/token')) as string;
    const res = await request(app).get(`/api/data/self?${range(T0, T0, 'hour')}`).set('Authorization', `Bearer ${accessToken}`).set('New-Api-User', String(alice.id));
    expect(usage(res).items).toEqual([item(T0, 'gpt-a', 2, 150)]);
    expectFailure(await request(app).get('/api/data/self'), 401, 'unauthorized');
  });

  it.each([
    ['granularity=week', /^granularity: /],
    ['start_timestamp=abc', /^start_timestamp: /],
    ['end_timestamp=-1', /^end_timestamp: /],
    ['end_timestamp=253402300800', /^end_timestamp: /],
    [range(T0 + 1, T0, 'hour'), /^start_timestamp: must not be after end_timestamp$/],
    [range(T0, T0 + 31 * DAY + 1, 'hour'), /^end_timestamp: at most 31 days after start_timestamp with granularity hour/],
    [range(T0, T0 + 366 * DAY + 1, 'day'), /^end_timestamp: at most 366 days after start_timestamp with granularity day/],
    [`start_timestamp=${T0 + DAY}&end_timestamp=${T0}`, /^start_timestamp: must not be after end_timestamp$/],
  ])('?%s: 400 naming the parameter', async (query, message) => {
    const user = await loggedInUser(account);
    expectFailure(await user.agent.get(`/api/data/self?${query}`), 400, 'invalid_request', message);
  });

  it('the longest ranges are accepted: 31 days of hours, 366 days of days', async () => {
    const user = await loggedInUser(account);
    expect(usage(await user.agent.get(`/api/data/self?${range(T0, T0 + 31 * DAY, 'hour')}`)).items).toEqual([]);
    expect(usage(await user.agent.get(`/api/data/self?${range(T0, T0 + 366 * DAY, 'day')}`)).items).toEqual([]);
  });
});

describe('GET /api/data/ (admin)', () => {
  it('everyone\'s usage with usernames, sorted by bucket, model and username; filtered by username and model', async () => {
    const { alice, bob } = await twoUsers();
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const day = range(T0, T0 + 2 * DAY - 1, 'day');

    expect(usage(await admin.agent.get(`/api/data/?${day}`)).items).toEqual([
      item(T0, 'gpt-a', 2, 150, alice.username),
      item(T0, 'gpt-a', 1, 7, bob.username),
      item(T0, 'gpt-b', 1, 30, alice.username),
      item(T0 + DAY, 'gpt-a', 1, 20, alice.username),
    ]);
    expect(usage(await admin.agent.get(`/api/data?${range(T0, T0 + HOUR - 1, 'hour')}`)).items).toEqual([
      item(T0, 'gpt-a', 2, 150, alice.username),
      item(T0, 'gpt-a', 1, 7, bob.username),
    ]);
    expect(usage(await admin.agent.get(`/api/data/?${day}&username=${bob.username}`)).items).toEqual([item(T0, 'gpt-a', 1, 7, bob.username)]);
    expect(usage(await admin.agent.get(`/api/data/?${day}&model_name=gpt-b`)).items).toEqual([item(T0, 'gpt-b', 1, 30, alice.username)]);
    expect(usage(await admin.agent.get(`/api/data/?${day}&username=${alice.username}&model_name=gpt-a`)).items).toEqual([
      item(T0, 'gpt-a', 2, 150, alice.username),
      item(T0 + DAY, 'gpt-a', 1, 20, alice.username),
    ]);
    // Exact matches only.
    expect(usage(await admin.agent.get(`/api/data/?${day}&model_name=gpt`)).items).toEqual([]);
    expect(usage(await admin.agent.get(`/api/data/?${day}&username=${alice.username.slice(0, -1)}`)).items).toEqual([]);
  });

  it('a user: 403; unauthenticated: 401; bad parameters: 400', async () => {
    const { alice } = await twoUsers();
    expectFailure(await alice.agent.get('/api/data/'), 403, 'forbidden');
    expectFailure(await request(app).get('/api/data/'), 401, 'unauthorized');
    const admin = await loggedInUser(account, { role: ROLE.admin });
    expectFailure(await admin.agent.get(`/api/data/?username=${'x'.repeat(21)}`), 400, 'invalid_request', /^username: /);
    expectFailure(await admin.agent.get(`/api/data/?${range(T0, T0 + 32 * DAY, 'hour')}`), 400, 'invalid_request', /^end_timestamp: at most 31 days/);
  });
});
