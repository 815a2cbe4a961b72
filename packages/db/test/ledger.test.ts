// The ledger module against the run's private, migrated database (created by the shared Jest global
// setup of @modelgate/testing, which this package cannot depend on: it depends on this package).
import { randomBytes } from 'node:crypto';
import { LOG_TYPE } from '@modelgate/schemas';
import { changeBalance, chargeConsumeBatch, type ConsumeRow, createPrismaClient, ledgerMismatches, type PrismaClient } from '../src';

let prisma: PrismaClient;
/** The users this file made (other files share the run's database and leave their own rows). */
const ours = new Set<number>();

beforeAll(() => {
  prisma = createPrismaClient({ databaseUrl: process.env.DATABASE_URL as string, maxConnections: 8 });
});
afterEach(async () => {
  // Whatever a test did, every user's quota is the sum of its log rows.
  expect((await ledgerMismatches(prisma)).filter((mismatch) => ours.has(mismatch.userId))).toEqual([]);
});
afterAll(() => prisma.$disconnect());

/** A user with no balance and no log row (the invariant holds from the start). */
async function newUser() {
  const user = await prisma.user.create({ data: { username: `ledger_${randomBytes(6).toString('hex')}`, passwordHash: 'x' } });
  ours.add(user.id);
  return user;
}

async function balancesOf(userId: number) {
  const user = await prisma.user.findUniqueOrThrow({ where: { id: userId } });
  return { quota: user.quota, usedQuota: user.usedQuota, requestCount: user.requestCount, affQuota: user.affQuota, affHistoryQuota: user.affHistoryQuota, affCount: user.affCount };
}

const logsOf = (userId: number) => prisma.log.findMany({ where: { userId }, orderBy: { id: 'asc' } });

describe('changeBalance', () => {
  test('moves the quota and appends one log row carrying the same delta, in the caller transaction', async () => {
    const user = await newUser();

    const after = await prisma.$transaction((tx) =>
      changeBalance(tx, { userId: user.id, type: LOG_TYPE.topup, content: 'top-up ref_1', quota: 7_000n, requestId: 'evt_1', other: { trade_no: 'ref_1' } }),
    );

    expect(after).toEqual({ username: user.username, quota: 7_000n, affQuota: 0n });
    const [row] = await logsOf(user.id);
    expect(row).toMatchObject({ type: LOG_TYPE.topup, content: 'top-up ref_1', username: user.username, quota: 7_000n, requestId: 'evt_1', other: { trade_no: 'ref_1' } });
    // timestamp(3) columns hold UTC wall time: read back as UTC, it is now.
    expect(Math.abs((row?.createdAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).updatedAt.getTime()).toBeGreaterThan(user.updatedAt.getTime());
  });

  test('a change that would take quota below zero writes nothing', async () => {
    const user = await newUser();
    await prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.manage, content: 'set', quota: 100n }));

    const refused = await prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.manage, content: 'too much', quota: -101n }));

    expect(refused).toBeUndefined();
    expect((await balancesOf(user.id)).quota).toBe(100n);
    expect(await logsOf(user.id)).toHaveLength(1);
  });

  test('a credit to a user in debt applies even when it leaves a debt; a debit still may not make one', async () => {
    const user = await newUser();
    await prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.manage, content: 'fund', quota: 10n }));
    // A charge beyond the balance, as the relay books it (in full: the balance goes below 0).
    await prisma.$transaction(async (tx) => {
      await tx.user.update({ where: { id: user.id }, data: { quota: { decrement: 110 } } });
      await tx.log.create({ data: { userId: user.id, type: LOG_TYPE.consume, quota: -110n, content: 'charge beyond the balance' } });
    });

    const credited = await prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.topup, content: 'top-up', quota: 40n }));
    const refused = await prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.manage, content: 'debit', quota: -1n }));

    expect(credited).toMatchObject({ quota: -60n });
    expect(refused).toBeUndefined();
    expect((await balancesOf(user.id)).quota).toBe(-60n);
  });

  test('an unknown user: nothing written', async () => {
    const refused = await prisma.$transaction((tx) => changeBalance(tx, { userId: 2_000_000_000, type: LOG_TYPE.system, content: 'x', quota: 5n }));
    expect(refused).toBeUndefined();
    expect(await prisma.log.count({ where: { userId: 2_000_000_000 } })).toBe(0);
  });

  test('affiliate columns: an invitation reward and a transfer to quota, each with its one row; a transfer beyond aff_quota writes nothing', async () => {
    const user = await newUser();
    await prisma.$transaction((tx) =>
      changeBalance(tx, { userId: user.id, type: LOG_TYPE.system, content: 'invitation reward', quota: 0n, affQuota: 300n, affHistoryQuota: 300n, affCount: 1 }),
    );
    const moved = await prisma.$transaction((tx) =>
      changeBalance(tx, { userId: user.id, type: LOG_TYPE.system, content: 'transfer', quota: 200n, affQuota: -200n }),
    );
    const refused = await prisma.$transaction((tx) =>
      changeBalance(tx, { userId: user.id, type: LOG_TYPE.system, content: 'transfer', quota: 101n, affQuota: -101n }),
    );

    expect(moved).toEqual({ username: user.username, quota: 200n, affQuota: 100n });
    expect(refused).toBeUndefined();
    expect(await balancesOf(user.id)).toEqual({ quota: 200n, usedQuota: 0n, requestCount: 0n, affQuota: 100n, affHistoryQuota: 300n, affCount: 1 });
    expect((await logsOf(user.id)).map((row) => row.quota)).toEqual([0n, 200n]);
  });

  test('rolled back with the caller transaction: neither the balance nor the row stays', async () => {
    const user = await newUser();
    await expect(
      prisma.$transaction(async (tx) => {
        await changeBalance(tx, { userId: user.id, type: LOG_TYPE.manage, content: 'undone', quota: 50n });
        throw new Error('caller fails after the change');
      }),
    ).rejects.toThrow('caller fails');
    expect((await balancesOf(user.id)).quota).toBe(0n);
    expect(await logsOf(user.id)).toHaveLength(0);
  });

  test('30 concurrent debits of 10 from a balance of 100: exactly 10 pass, one row each', async () => {
    const user = await newUser();
    await prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.manage, content: 'fund', quota: 100n }));

    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.manage, content: `debit ${i}`, quota: -10n })),
      ),
    );

    expect(results.filter(Boolean)).toHaveLength(10);
    expect((await balancesOf(user.id)).quota).toBe(0n);
    expect(await logsOf(user.id)).toHaveLength(11);
  });
});

describe('chargeConsumeBatch', () => {
  let sequence = 0;
  function consumeRow(userId: number, tokenId: number, channelId: number, charged: number, at = new Date(), modelName = 'gpt-test'): ConsumeRow {
    sequence += 1;
    return {
      user_id: userId,
      created_at: at.toISOString().replace('Z', ''),
      username: 'someone',
      token_id: tokenId,
      token_name: 'key',
      model_name: modelName,
      charged,
      prompt_tokens: 3,
      completion_tokens: 4,
      use_time_ms: 5,
      first_byte_ms: null,
      is_stream: false,
      channel_id: channelId,
      request_id: `req_${sequence}`,
      other: { entry: `entry_${sequence}` },
    };
  }

  async function fundedAccount(quota: bigint, remainQuota: bigint, unlimitedQuota = false) {
    const user = await newUser();
    await prisma.$transaction((tx) => changeBalance(tx, { userId: user.id, type: LOG_TYPE.system, content: 'fund', quota }));
    const token = await prisma.token.create({
      data: { userId: user.id, name: 'key', keyHash: randomBytes(16).toString('hex'), keyPrefix: 'sk-', keySuffix: 'x', remainQuota, unlimitedQuota },
    });
    return { user, token };
  }

  const newChannel = () => prisma.channel.create({ data: { type: 1, name: 'c', keyEnc: 'x', models: 'gpt-test' } });

  test('one batch over several users, keys and channels: rows written, every counter moved by the sum of its rows', async () => {
    const alice = await fundedAccount(1_000n, 500n);
    const bob = await fundedAccount(1_000n, 0n, true);
    const [first, second] = [await newChannel(), await newChannel()];
    const rows = [
      consumeRow(alice.user.id, alice.token.id, first.id, 100),
      consumeRow(alice.user.id, alice.token.id, second.id, 50),
      consumeRow(bob.user.id, bob.token.id, first.id, 30),
      consumeRow(bob.user.id, bob.token.id, first.id, 0), // no token used: a row, a request, no charge
    ];

    await prisma.$transaction((tx) => chargeConsumeBatch(tx, rows, new Map([[alice.token.id, 150], [bob.token.id, 0]])));

    expect(await balancesOf(alice.user.id)).toMatchObject({ quota: 850n, usedQuota: 150n, requestCount: 2n });
    expect(await balancesOf(bob.user.id)).toMatchObject({ quota: 970n, usedQuota: 30n, requestCount: 2n });
    const tokens = await prisma.token.findMany({ where: { id: { in: [alice.token.id, bob.token.id] } }, orderBy: { id: 'asc' } });
    expect(tokens.map((t) => [t.remainQuota, t.usedQuota])).toEqual([[350n, 150n], [0n, 30n]]);
    expect(tokens.every((t) => t.accessedAt instanceof Date)).toBe(true);
    const channels = await prisma.channel.findMany({ where: { id: { in: [first.id, second.id] } }, orderBy: { id: 'asc' } });
    expect(channels.map((c) => c.usedQuota)).toEqual([130n, 50n]);
    const consumed = await prisma.log.findMany({ where: { userId: alice.user.id, type: LOG_TYPE.consume }, orderBy: { id: 'asc' } });
    expect(consumed.map((row) => [row.quota, row.requestId, row.channelId, row.promptTokens])).toEqual([
      [-100n, rows[0]?.request_id, first.id, 3],
      [-50n, rows[1]?.request_id, second.id, 3],
    ]);
  });

  test('a charge beyond the balances is booked in full: the user and the limited key go below 0 by the excess', async () => {
    const carol = await fundedAccount(100n, 60n);
    const channel = await newChannel();

    await prisma.$transaction((tx) =>
      chargeConsumeBatch(tx, [consumeRow(carol.user.id, carol.token.id, channel.id, 101)], new Map([[carol.token.id, 101]])),
    );

    expect(await balancesOf(carol.user.id)).toMatchObject({ quota: -1n, usedQuota: 101n, requestCount: 1n });
    const token = await prisma.token.findUniqueOrThrow({ where: { id: carol.token.id } });
    expect([token.remainQuota, token.usedQuota]).toEqual([-41n, 101n]);
    const [row] = await prisma.log.findMany({ where: { userId: carol.user.id, type: LOG_TYPE.consume } });
    expect(row?.quota).toBe(-101n);
  });

  test("counts each key's charges in its UTC budget period, from 0 again in a new period", async () => {
    const dave = await fundedAccount(1_000n, 0n, true);
    const channel = await newChannel();
    const charge = (amount: number) => prisma.$transaction((tx) => chargeConsumeBatch(tx, [consumeRow(dave.user.id, dave.token.id, channel.id, amount)], new Map()));
    const budgetOf = () => prisma.token.findUniqueOrThrow({ where: { id: dave.token.id }, select: { budgetUsedQuota: true, budgetPeriodStart: true } });
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));

    await charge(30);
    await charge(12);
    expect(await budgetOf()).toEqual({ budgetUsedQuota: 42n, budgetPeriodStart: monthStart });

    // Counted in an earlier month: the next charge starts the current one.
    await prisma.token.update({ where: { id: dave.token.id }, data: { budgetPeriodStart: new Date(Date.UTC(2020, 0, 1)), budgetUsedQuota: 999n } });
    await charge(5);
    expect(await budgetOf()).toEqual({ budgetUsedQuota: 5n, budgetPeriodStart: monthStart });

    // A daily budget counts from the start of the UTC day.
    await prisma.token.update({ where: { id: dave.token.id }, data: { budgetPeriod: 'day' } });
    await charge(7);
    expect(await budgetOf()).toEqual({ budgetUsedQuota: 7n, budgetPeriodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())) });
  });

  test('reports the users a batch takes from at least their warning threshold to below it, once per crossing', async () => {
    const erin = await fundedAccount(1_000n, 0n, true);
    const frank = await fundedAccount(1_000n, 0n, true);
    await prisma.user.update({ where: { id: erin.user.id }, data: { notifyType: 'email', quotaWarningThreshold: 500n } });
    // Frank crosses the same threshold, but asked for no warning.
    await prisma.user.update({ where: { id: frank.user.id }, data: { quotaWarningThreshold: 500n } });
    const channel = await newChannel();
    const batch = (rows: ConsumeRow[]) => prisma.$transaction((tx) => chargeConsumeBatch(tx, rows, new Map()));

    expect(await batch([consumeRow(erin.user.id, erin.token.id, channel.id, 400)])).toEqual([]);
    expect(
      await batch([
        consumeRow(erin.user.id, erin.token.id, channel.id, 50),
        consumeRow(erin.user.id, erin.token.id, channel.id, 60),
        consumeRow(frank.user.id, frank.token.id, channel.id, 600),
      ]),
    ).toEqual([{ userId: erin.user.id, before: 600n, after: 490n }]);
    // Already below: no second warning until a credit takes the balance back up.
    expect(await batch([consumeRow(erin.user.id, erin.token.id, channel.id, 10)])).toEqual([]);
    await prisma.$transaction((tx) => changeBalance(tx, { userId: erin.user.id, type: LOG_TYPE.topup, content: 'top-up', quota: 100n }));
    expect(await batch([consumeRow(erin.user.id, erin.token.id, channel.id, 100)])).toEqual([{ userId: erin.user.id, before: 580n, after: 480n }]);
  });

  /** What the relay's writer does: lock the batch's users (in id order), then book the batch. */
  const chargeAsTheRelay = (rows: ConsumeRow[]) =>
    prisma.$transaction(async (tx) => {
      await tx.$queryRawUnsafe('SELECT id FROM users WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE', [...new Set(rows.map((row) => row.user_id))]);
      await chargeConsumeBatch(tx, rows, new Map());
    });

  const bucketsOf = (userIds: number[]) =>
    prisma.usageBucket.findMany({ where: { userId: { in: userIds } }, orderBy: [{ userId: 'asc' }, { bucket: 'asc' }, { modelName: 'asc' }] });

  /** The same sums computed from the consume rows themselves (what the buckets must always equal). */
  const logSumsOf = (userIds: number[]) =>
    prisma.$queryRaw<{ userId: number; bucket: bigint; modelName: string; requests: bigint; promptTokens: bigint; completionTokens: bigint; quota: bigint }[]>`
      SELECT user_id AS "userId", floor(extract(epoch FROM created_at) / 3600)::bigint * 3600 AS bucket, model_name AS "modelName",
             count(*) AS requests, sum(prompt_tokens)::bigint AS "promptTokens", sum(completion_tokens)::bigint AS "completionTokens",
             (-sum(quota))::bigint AS quota
        FROM logs WHERE type = ${LOG_TYPE.consume} AND user_id = ANY(${userIds}::int[])
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;

  test('usage buckets: the rows summed per user, UTC hour of created_at and model, added to across batches', async () => {
    const { user, token } = await fundedAccount(10_000n, 0n, true);
    const channel = await newChannel();
    const hour = Date.UTC(2026, 0, 1, 10) / 1000;
    const at = (seconds: number) => new Date(seconds * 1000);
    await chargeAsTheRelay([
      consumeRow(user.id, token.id, channel.id, 100, at(hour), 'model-a'),
      consumeRow(user.id, token.id, channel.id, 20, at(hour + 3599.999), 'model-a'),
      consumeRow(user.id, token.id, channel.id, 7, at(hour + 60), 'model-b'),
      consumeRow(user.id, token.id, channel.id, 0, at(hour + 3600), 'model-a'),
    ]);
    // A second batch adds to an existing bucket and opens one a day later.
    await chargeAsTheRelay([
      consumeRow(user.id, token.id, channel.id, 5, at(hour + 1800), 'model-b'),
      consumeRow(user.id, token.id, channel.id, 9, at(hour + 86_400), 'model-a'),
    ]);

    const buckets = (await bucketsOf([user.id])).map((b) => [Number(b.bucket) - hour, b.modelName, b.requests, b.promptTokens, b.completionTokens, b.quota]);
    expect(buckets).toEqual([
      [0, 'model-a', 2n, 6n, 8n, 120n],
      [0, 'model-b', 2n, 6n, 8n, 12n],
      [3600, 'model-a', 1n, 3n, 4n, 0n],
      [86_400, 'model-a', 1n, 3n, 4n, 9n],
    ]);
    expect(await bucketsOf([user.id])).toEqual(await logSumsOf([user.id]));
  });

  test('usage buckets: 24 concurrent batches over 3 users, 3 hours and 2 models equal the sums of the rows', async () => {
    const accounts = await Promise.all([0, 1, 2].map(() => fundedAccount(1_000_000n, 0n, true)));
    const channel = await newChannel();
    const hour = Date.UTC(2026, 1, 1, 23) / 1000;
    const batches = Array.from({ length: 24 }, (_, b) =>
      Array.from({ length: 9 }, (_, i) => {
        // Every batch meets every user in every hour; the batches alternate between the models.
        const { user, token } = accounts[i % 3]!;
        return consumeRow(user.id, token.id, channel.id, b + i, new Date((hour + Math.floor(i / 3) * 3600 + b) * 1000), b % 2 ? 'model-a' : 'model-b');
      }),
    );

    await Promise.all(batches.map((rows) => chargeAsTheRelay(rows)));

    const userIds = accounts.map(({ user }) => user.id);
    const buckets = await bucketsOf(userIds);
    expect(buckets).toEqual(await logSumsOf(userIds));
    expect(buckets).toHaveLength(3 * 3 * 2);
    const total = (field: 'requests' | 'quota') => buckets.reduce((sum, b) => sum + b[field], 0n);
    expect(total('requests')).toBe(24n * 9n);
    expect(total('quota')).toBe(BigInt(batches.flat().reduce((sum, row) => sum + row.charged, 0)));
  });

  test('an empty batch sends nothing', async () => {
    await expect(prisma.$transaction((tx) => chargeConsumeBatch(tx, [], new Map()))).resolves.toEqual([]);
  });
});
