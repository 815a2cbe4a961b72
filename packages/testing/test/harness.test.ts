import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrismaClient } from '@modelgate/db';
import pg from 'pg';
import globalSetup from '../src/global-setup';
import globalTeardown from '../src/global-teardown';
import { createTestDatabase, createTestRedis, dropTestDatabase, redisPrefix, testDatabaseUrl } from '../src';
import { dropStaleTemplates, TEMPLATE_PREFIX } from '../src/test-database';

const serverUrl = process.env.DATABASE_URL as string;

async function databaseNames(pattern: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [pattern]);
    return rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

async function tablesOf(databaseUrl: string): Promise<string[]> {
  const prisma = createPrismaClient({ databaseUrl, maxConnections: 1 });
  try {
    const rows = await prisma.$queryRawUnsafe<{ tablename: string }[]>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    return rows.map((row) => row.tablename).sort();
  } finally {
    await prisma.$disconnect();
  }
}

describe('the run this file is part of', () => {
  it('has a private, migrated database and its own Redis prefix', async () => {
    expect(new URL(testDatabaseUrl()).pathname).toMatch(/^\/mg_test_[0-9a-f]{12}$/);
    expect(await tablesOf(testDatabaseUrl())).toEqual(expect.arrayContaining(['_prisma_migrations', 'users', 'logs', 'tokens']));
    expect(redisPrefix()).toMatch(/^mgtest:[0-9a-f]{12}:$/);
  });
});

describe('createTestDatabase', () => {
  it('gives concurrent callers distinct, fully migrated databases, and drops them', async () => {
    const [first, second] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    try {
      expect(first.name).not.toBe(second.name);
      expect(await tablesOf(first.url)).toEqual(await tablesOf(testDatabaseUrl()));
      expect(await tablesOf(second.url)).toEqual(await tablesOf(testDatabaseUrl()));
    } finally {
      await dropTestDatabase(first.name);
      await dropTestDatabase(second.name);
    }
    expect(await databaseNames(first.name)).toEqual([]);
    expect(await databaseNames(second.name)).toEqual([]);
  });

  it('refuses to drop a database that is not a test database', async () => {
    await expect(dropTestDatabase('modelgate')).rejects.toThrow('not a test database');
  });
});

describe('Jest global setup and teardown', () => {
  const savedEnv = { ...process.env };
  afterEach(() => {
    process.env = { ...savedEnv };
  });

  it('hand the run a database and a Redis prefix, then leave nothing behind', async () => {
    const ownPrefix = redisPrefix();
    const outsider = `${ownPrefix}outsider`;
    const redis = createTestRedis();
    let tornDown = false;
    try {
      await globalSetup({}, { rootDir: join(__dirname, '..') });
      const databaseUrl = process.env.DATABASE_URL as string;
      const prefix = process.env.REDIS_PREFIX as string;
      const databaseName = new URL(databaseUrl).pathname.slice(1);
      expect(databaseName).not.toBe(new URL(serverUrl).pathname.slice(1));
      expect(prefix).not.toBe(ownPrefix);
      expect(await tablesOf(databaseUrl)).toContain('users');

      // More keys than one SCAN page, plus one of another run that must survive.
      const keys = Array.from({ length: 2500 }, (_, i) => `${prefix}key:${i}`);
      for (let i = 0; i < keys.length; i += 500) {
        await redis.mset(...keys.slice(i, i + 500).flatMap((key) => [key, '1']));
      }
      await redis.set(outsider, 'keep');

      await globalTeardown();
      tornDown = true;

      expect(await databaseNames(databaseName)).toEqual([]);
      expect(await redis.exists(...keys.slice(0, 100), ...keys.slice(-1))).toBe(0);
      expect(await redis.get(outsider)).toBe('keep');
    } finally {
      if (!tornDown) await globalTeardown();
      await redis.del(outsider);
      redis.disconnect();
    }
  });

  it('create no database for a package that depends on neither @modelgate/db nor @modelgate/testing', async () => {
    const packageDir = await mkdtemp(join(tmpdir(), 'mg-package-'));
    await writeFile(join(packageDir, 'package.json'), JSON.stringify({ name: '@modelgate/errors', dependencies: { zod: '^4' } }));
    const before = await databaseNames('mg\\_test\\_%');
    await globalSetup({}, { rootDir: packageDir });
    await rm(packageDir, { recursive: true });
    expect(process.env.DATABASE_URL).toBe(savedEnv.DATABASE_URL);
    expect(process.env.REDIS_PREFIX).toMatch(/^mgtest:[0-9a-f]{12}:$/);
    expect((await databaseNames('mg\\_test\\_%')).length).toBeLessThanOrEqual(before.length);
    await globalTeardown();
  });
});

describe('templates on a server shared by several checkouts', () => {
  const otherCheckouts = 'mg_tpl_00000000_0123456789abcdef';
  const ownStale = `${TEMPLATE_PREFIX}stale0000000000`;

  afterAll(async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    for (const name of [otherCheckouts, ownStale]) await client.query(`DROP DATABASE IF EXISTS "${name}"`);
    await client.end();
  });

  it("prunes this checkout's stale templates and leaves other checkouts' templates alone", async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    for (const name of [otherCheckouts, ownStale]) await client.query(`CREATE DATABASE "${name}"`);
    await client.end();

    await dropStaleTemplates(serverUrl, `${TEMPLATE_PREFIX}current00000000`);

    expect(await databaseNames(otherCheckouts)).toEqual([otherCheckouts]);
    expect(await databaseNames(ownStale)).toEqual([]);
  });
});
