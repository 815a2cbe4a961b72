import { createPrismaClient, decryptSecret, type PrismaClient, sha256Hex } from '@modelgate/db';
import { verify } from '@node-rs/argon2';
import {
  createApiKey,
  createChannel,
  createTestPrisma,
  createUser,
  resetDatabase,
  setOption,
  TEST_CRYPTO_SECRET,
  TEST_PASSWORD,
} from '../src';

let prisma: PrismaClient;

beforeAll(() => {
  prisma = createTestPrisma();
});
beforeEach(() => resetDatabase(prisma));
afterAll(() => prisma.$disconnect());

describe('createUser', () => {
  it('creates users with unique valid usernames whose password is TEST_PASSWORD', async () => {
    const [first, second] = [await createUser(prisma), await createUser(prisma)];
    expect(first.username).not.toBe(second.username);
    expect(first.username).toMatch(/^[A-Za-z0-9_]{3,20}$/);
    expect(await verify(first.passwordHash, TEST_PASSWORD)).toBe(true);
    expect(await verify(first.passwordHash, 'wrong password')).toBe(false);
    expect(first).toMatchObject({ role: 1, status: 1, group: 'default', quota: 0n });
  });

  it('takes overrides, including a plain password', async () => {
    const admin = await createUser(prisma, { username: 'alice', role: 10, email: 'alice@example.com', password: 's3cret-pass' });
    expect(admin).toMatchObject({ username: 'alice', role: 10, email: 'alice@example.com' });
    expect(await verify(admin.passwordHash, 's3cret-pass')).toBe(true);
  });

  it('books a starting quota in the ledger, so the balance equals the sum of log deltas', async () => {
    const rich = await createUser(prisma, { quota: 750_000 });
    const poor = await createUser(prisma);
    const sums = await prisma.log.groupBy({ by: ['userId'], _sum: { quota: true } });
    expect(sums).toEqual([{ userId: rich.id, _sum: { quota: 750_000n } }]);
    expect((await prisma.log.findFirstOrThrow({ where: { userId: rich.id } })).type).toBe(4);
    expect(await prisma.log.count({ where: { userId: poor.id } })).toBe(0);
  });
});

describe('createApiKey', () => {
  it('returns the full sk- key once and stores only its hash and ends', async () => {
    const user = await createUser(prisma);
    const { token, key } = await createApiKey(prisma, user.id);
    expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(token).toMatchObject({
      userId: user.id,
      keyHash: sha256Hex(key),
      keyPrefix: key.slice(3, 7),
      keySuffix: key.slice(-4),
      status: 1,
      expiresAt: null,
      unlimitedQuota: false,
    });
    expect(token.remainQuota).toBeGreaterThan(0n);
    expect(JSON.stringify(await prisma.token.findMany(), (_k, v) => (typeof v === 'bigint' ? Number(v) : v))).not.toContain(key.slice(3));
  });

  it('accepts a fixed key and overrides', async () => {
    const user = await createUser(prisma);
    const key = `sk-${'a1'.repeat(24)}`;
    const { token } = await createApiKey(prisma, user.id, { key, name: 'limited', remainQuota: 5, modelLimitsEnabled: true, modelLimits: 'm1' });
    expect(token).toMatchObject({ name: 'limited', remainQuota: 5n, modelLimits: 'm1', keyHash: sha256Hex(key), keyPrefix: 'a1a1' });
  });
});

describe('createChannel', () => {
  it('stores the upstream key encrypted under the test CRYPTO_SECRET', async () => {
    expect(process.env.CRYPTO_SECRET).toBe(TEST_CRYPTO_SECRET);
    const channel = await createChannel(prisma, { key: 'sk-upstream-123', baseUrl: 'http://127.0.0.1:9', type: 24, models: 'gemini-2.5-flash' });
    expect(channel.keyEnc).toMatch(/^v1\./);
    expect(channel.keyEnc).not.toContain('sk-upstream-123');
    expect(decryptSecret(channel.keyEnc, TEST_CRYPTO_SECRET)).toBe('sk-upstream-123');
    expect(channel).toMatchObject({ type: 24, baseUrl: 'http://127.0.0.1:9', models: 'gemini-2.5-flash', groups: 'default', status: 1 });
  });

  it('uses another secret when told', async () => {
    const channel = await createChannel(prisma, { cryptoSecret: 'other-secret' });
    expect(decryptSecret(channel.keyEnc, 'other-secret')).toBe('sk-upstream-test');
  });
});

describe('setOption', () => {
  it('stores values as text and replaces earlier ones', async () => {
    await setOption(prisma, 'RetryTimes', 3);
    await setOption(prisma, 'RegisterEnabled', false);
    await setOption(prisma, 'ModelRatio', { 'gpt-3.5-turbo-instruct': 0.75 });
    await setOption(prisma, 'StripePriceId', 'price_123');
    await setOption(prisma, 'RetryTimes', '5');
    const options = await prisma.option.findMany({ orderBy: { key: 'asc' } });
    expect(options.map(({ key, value }) => [key, value])).toEqual([
      ['ModelRatio', '{"gpt-3.5-turbo-instruct":0.75}'],
      ['RegisterEnabled', 'false'],
      ['RetryTimes', '5'],
      ['StripePriceId', 'price_123'],
    ]);
  });
});

describe('resetDatabase', () => {
  it('empties every table and restarts ids, keeping the migration history', async () => {
    const user = await createUser(prisma, { quota: 10 });
    await createApiKey(prisma, user.id);
    await createChannel(prisma);
    await setOption(prisma, 'RetryTimes', 1);
    await resetDatabase(prisma);
    expect(await Promise.all([prisma.user.count(), prisma.token.count(), prisma.channel.count(), prisma.log.count(), prisma.option.count()])).toEqual([0, 0, 0, 0, 0]);
    expect((await createUser(prisma)).id).toBe(1);
    const [migrations] = await prisma.$queryRawUnsafe<{ count: number }[]>('SELECT count(*)::int AS count FROM _prisma_migrations');
    expect(migrations?.count).toBeGreaterThan(0);
  });

  it('refuses to empty a database that is not a test database', async () => {
    const url = new URL(process.env.DATABASE_URL as string);
    url.pathname = '/postgres';
    const other = createPrismaClient({ databaseUrl: url.toString(), maxConnections: 1 });
    try {
      await expect(resetDatabase(other)).rejects.toThrow('refusing to empty "postgres": not a test database');
    } finally {
      await other.$disconnect();
    }
  });
});
