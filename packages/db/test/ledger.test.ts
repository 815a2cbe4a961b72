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
  function consumeRow(userId: number, tokenId: number, channelId: number, charged: number): ConsumeRow {
    sequence += 1;
    return {
      user_id: userId,
      created_at: new Date().toISOString().replace('Z', ''),
      content: 'model ratio 1',
      username: 'someone',
      token_id: tokenId,
      token_name: 'key',
      model_name: 'gpt-test',
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
      consumeRow(bob.user.id, bob.token.id, first.id, 0), // the balance ran out: a row, a request, no charge
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

  test('a charge beyond a balance is refused by the CHECK constraints and the whole batch writes nothing', async () => {
    const carol = await fundedAccount(100n, 1_000n);
    const dave = await fundedAccount(100n, 1_000n);
    const channel = await newChannel();

    await expect(
      prisma.$transaction((tx) =>
        chargeConsumeBatch(tx, [consumeRow(dave.user.id, dave.token.id, channel.id, 10), consumeRow(carol.user.id, carol.token.id, channel.id, 101)], new Map()),
      ),
    ).rejects.toThrow();

    expect((await balancesOf(carol.user.id)).quota).toBe(100n);
    expect((await balancesOf(dave.user.id)).quota).toBe(100n);
    expect(await prisma.log.count({ where: { userId: { in: [carol.user.id, dave.user.id] }, type: LOG_TYPE.consume } })).toBe(0);
  });

  test('an empty batch sends nothing', async () => {
    await expect(prisma.$transaction((tx) => chargeConsumeBatch(tx, [], new Map()))).resolves.toBeUndefined();
  });
});
