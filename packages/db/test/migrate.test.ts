import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPrismaClient, ledgerMismatches, type PrismaClient, RELEASE_MIGRATIONS } from '../src';
import {
  applyMigrations,
  assertMigrationsApplied,
  DatabaseUnreachableError,
  diffSchemaAgainstMigrations,
  ensureDatabase,
  migrationNames,
  MIGRATIONS_DIR,
  pendingMigrations,
  SCHEMA_PATH,
  withDatabase,
  writeMigration,
} from '../src/migrate';

// The Jest global setup points DATABASE_URL at this run's private, migrated database.
const runDatabaseUrl = process.env.DATABASE_URL as string;
const APPLICATION_TABLES = [
  'backup_codes', 'channels', 'logs', 'options', 'payment_events', 'redemptions', 'tokens', 'top_ups', 'two_factor', 'usage_buckets',
  'user_identities', 'users',
];

async function query<T extends pg.QueryResultRow>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function dropDatabase(name: string): Promise<void> {
  await query(withDatabase(runDatabaseUrl, 'postgres'), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

async function countShadowDatabases(): Promise<number> {
  const rows = await query<{ n: number }>(
    withDatabase(runDatabaseUrl, 'postgres'),
    "SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'mg\\_shadow\\_%'",
  );
  const [row] = rows;
  if (!row) throw new Error('count(*) returned no row');
  return row.n;
}

describe('applyMigrations on a new database', () => {
  const name = `mg_test_${randomBytes(6).toString('hex')}_fresh`;
  const url = withDatabase(runDatabaseUrl, name);

  afterAll(() => dropDatabase(name));

  it('creates the missing database, then applies every migration and records it', async () => {
    expect(await ensureDatabase(url)).toBe(true);
    const folder = (await readdir(MIGRATIONS_DIR, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();

    expect(await applyMigrations(url)).toEqual(folder);

    // The partitions of `logs` (one per month and the default one) are not tables of their own.
    const tables = await query<{ tablename: string }>(
      url,
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN (SELECT relname FROM pg_class WHERE relispartition)",
    );
    expect(tables.map((row) => row.tablename).sort()).toEqual([...APPLICATION_TABLES, '_prisma_migrations'].sort());

    // Recorded like `prisma migrate deploy`: finished, with the SHA-256 of the script as checksum.
    const recorded = await query<{ migration_name: string; checksum: string; finished: boolean }>(
      url,
      'SELECT migration_name, checksum, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name',
    );
    const expected = await Promise.all(
      folder.map(async (migration) => ({
        migration_name: migration,
        checksum: createHash('sha256').update(await readFile(join(MIGRATIONS_DIR, migration, 'migration.sql'))).digest('hex'),
        finished: true,
      })),
    );
    expect(recorded).toEqual(expected);
  });

  it('does nothing when run again', async () => {
    const before = await query(url, 'SELECT * FROM _prisma_migrations ORDER BY id');
    expect(await ensureDatabase(url)).toBe(false);
    expect(await applyMigrations(url)).toEqual([]);
    expect(await query(url, 'SELECT * FROM _prisma_migrations ORDER BY id')).toEqual(before);
  });
});

describe('pending migrations (the services\' boot check, `pnpm db:migrate --check` and `--wait`)', () => {
  const name = `mg_test_${randomBytes(6).toString('hex')}_pending`;
  const url = withDatabase(runDatabaseUrl, name);

  afterAll(() => dropDatabase(name));

  it('builds the services with the list of the migrations folder', async () => {
    expect(RELEASE_MIGRATIONS).toEqual(await migrationNames());
    expect(RELEASE_MIGRATIONS.length).toBeGreaterThan(0);
  });

  it('names every migration a missing or empty database lacks, and how to apply them', async () => {
    expect(await pendingMigrations(url, RELEASE_MIGRATIONS)).toEqual(RELEASE_MIGRATIONS);
    await ensureDatabase(url);
    await expect(assertMigrationsApplied(url, RELEASE_MIGRATIONS)).rejects.toThrow(
      `database "${name}" lacks ${RELEASE_MIGRATIONS.length} migration(s) of this release (${RELEASE_MIGRATIONS.join(', ')}): ` +
        'apply them with `pnpm db:migrate` (containers: the migrate image; Kubernetes: the migrate Job)',
    );
    await expect(assertMigrationsApplied(runDatabaseUrl, RELEASE_MIGRATIONS)).resolves.toBeUndefined();
  });

  it('--wait waits until someone else applied them, then exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../scripts/migrate.ts'), '--wait'], {
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('Waiting for')) resolve();
      }),
    );
    expect(output).toContain(`Waiting for the migrations of database "${name}": ${RELEASE_MIGRATIONS.length} pending`);
    expect(child.exitCode).toBeNull();

    await applyMigrations(url);
    expect(await exited).toBe(0);
    expect(output).toContain(`Database "${name}" has every migration of this release (${RELEASE_MIGRATIONS.length}).`);
  });
});

describe('balance CHECK constraints', () => {
  let prisma: PrismaClient;

  beforeAll(() => {
    prisma = createPrismaClient({ databaseUrl: runDatabaseUrl, maxConnections: 2 });
  });
  afterAll(() => prisma.$disconnect());

  async function newUser(quota = 100) {
    return prisma.user.create({ data: { username: `u_${randomBytes(4).toString('hex')}`, passwordHash: 'x', quota } });
  }

  it('lets users.quota and tokens.remain_quota go below 0: a charge beyond the balance is a debt, never cut to fit', async () => {
    const user = await newUser(100);
    await expect(prisma.user.update({ where: { id: user.id }, data: { quota: { decrement: 101 } } })).resolves.toMatchObject({ quota: -1n });
    const token = await prisma.token.create({
      data: { userId: user.id, name: 'k', keyHash: randomBytes(16).toString('hex'), keyPrefix: 'abcd', keySuffix: 'wxyz', remainQuota: 10 },
    });
    await expect(prisma.token.update({ where: { id: token.id }, data: { remainQuota: { decrement: 11 } } })).resolves.toMatchObject({ remainQuota: -1n });
  });

  it('rejects negative used, affiliate and request counters on users', async () => {
    const user = await newUser();
    for (const field of ['usedQuota', 'affQuota', 'affHistoryQuota', 'requestCount'] as const) {
      await expect(prisma.user.update({ where: { id: user.id }, data: { [field]: -5 } })).rejects.toThrow(/_non_negative/);
    }
  });

  it('rejects negative token and channel counters and empty top-ups', async () => {
    const user = await newUser();
    const token = await prisma.token.create({
      data: { userId: user.id, name: 'k', keyHash: randomBytes(16).toString('hex'), keyPrefix: 'abcd', keySuffix: 'wxyz', remainQuota: 10 },
    });
    await expect(prisma.token.update({ where: { id: token.id }, data: { usedQuota: -1 } })).rejects.toThrow(/tokens_used_quota_non_negative/);

    const channel = await prisma.channel.create({ data: { type: 1, name: 'c', keyEnc: 'x', models: 'm' } });
    await expect(prisma.channel.update({ where: { id: channel.id }, data: { usedQuota: -1 } })).rejects.toThrow(
      /channels_used_quota_non_negative/,
    );

    for (const amount of [0, -3]) {
      await expect(
        prisma.topUp.create({ data: { userId: user.id, tradeNo: randomBytes(8).toString('hex'), amount, money: 1 } }),
      ).rejects.toThrow(/top_ups_amount_positive/);
    }
  });
});

describe('diffSchemaAgainstMigrations (pnpm db:migration:create)', () => {
  let workDir: string;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'mg-migrations-'));
  });
  afterAll(() => rm(workDir, { recursive: true, force: true }));

  it('finds nothing to change: the migrations match the schema, hand-written CHECK constraints included', async () => {
    const shadowsBefore = await countShadowDatabases();
    expect(await diffSchemaAgainstMigrations(runDatabaseUrl)).toEqual({ sql: null });
    expect(await countShadowDatabases()).toBeLessThanOrEqual(shadowsBefore);
  });

  it('writes only the change a schema edit needs, leaving the CHECK constraints alone', async () => {
    const schemaPath = join(workDir, 'schema.prisma');
    const schema = await readFile(SCHEMA_PATH, 'utf8');
    await writeFile(schemaPath, schema.replace('  remark          String    @default("")\n', '  remark          String    @default("")\n  nickname        String?\n'));

    const { sql } = await diffSchemaAgainstMigrations(runDatabaseUrl, { schemaPath });
    expect(sql).toContain('ALTER TABLE "users" ADD COLUMN     "nickname" TEXT');
    expect(sql).not.toMatch(/DROP|CONSTRAINT/);

    const migrationsDir = join(workDir, 'migrations');
    await cp(MIGRATIONS_DIR, migrationsDir, { recursive: true });
    const folder = await writeMigration('add_nickname', sql as string, { migrationsDir, date: new Date('2030-01-02T03:04:05Z') });
    expect(folder).toBe('20300102030405_add_nickname');
    expect(await readFile(join(migrationsDir, folder, 'migration.sql'), 'utf8')).toBe(sql);
    expect(await readFile(join(migrationsDir, 'migration_lock.toml'), 'utf8')).toContain('provider = "postgresql"');

    // With the new migration in place, the edited schema has nothing left to change.
    expect(await diffSchemaAgainstMigrations(runDatabaseUrl, { schemaPath, migrationsDir })).toEqual({ sql: null });
  });
});

describe('usage_buckets migration', () => {
  it('backfills the hourly buckets from the consume rows written before it', async () => {
    const name = `mg_test_${randomBytes(6).toString('hex')}_usage`;
    const url = withDatabase(runDatabaseUrl, name);
    const migrationsDir = await mkdtemp(join(tmpdir(), 'mg-usage-'));
    const usageMigration = (await migrationNames()).find((migration) => migration.endsWith('_usage_buckets')) as string;
    try {
      // The database as the release before it left it, with consume rows in two hours and a top-up row.
      await cp(MIGRATIONS_DIR, migrationsDir, { recursive: true, filter: (source) => !source.includes(usageMigration) });
      await ensureDatabase(url);
      await applyMigrations(url, migrationsDir);
      await query(url, "INSERT INTO users (id, username, password_hash, updated_at) VALUES (1, 'old', 'x', now())");
      await query(
        url,
        `INSERT INTO logs (user_id, created_at, type, model_name, quota, prompt_tokens, completion_tokens) VALUES
           (1, '2026-01-01 10:00:00', 2, 'gpt-a', -100, 3, 4), (1, '2026-01-01 10:59:59.999', 2, 'gpt-a', -50, 3, 4),
           (1, '2026-01-01 11:00:00', 2, 'gpt-a', -7, 3, 4), (1, '2026-01-01 10:30:00', 1, '', 500, 0, 0)`,
      );

      expect(await applyMigrations(url)).toEqual([usageMigration]);

      const hour = Date.UTC(2026, 0, 1, 10) / 1000;
      const buckets = await query(url, 'SELECT user_id, bucket::int, model_name, requests::int, prompt_tokens::int, completion_tokens::int, quota::int FROM usage_buckets ORDER BY bucket');
      expect(buckets).toEqual([
        { user_id: 1, bucket: hour, model_name: 'gpt-a', requests: 2, prompt_tokens: 6, completion_tokens: 8, quota: 150 },
        { user_id: 1, bucket: hour + 3600, model_name: 'gpt-a', requests: 1, prompt_tokens: 3, completion_tokens: 4, quota: 7 },
      ]);
    } finally {
      await rm(migrationsDir, { recursive: true, force: true });
      await dropDatabase(name);
    }
  });
});

describe('identity_limits_credits migration', () => {
  it('keeps every user, key and log row, with the new columns at their defaults and the new checks holding', async () => {
    const name = `mg_test_${randomBytes(6).toString('hex')}_limits`;
    const url = withDatabase(runDatabaseUrl, name);
    const migrationsDir = await mkdtemp(join(tmpdir(), 'mg-limits-'));
    const limitsMigration = (await migrationNames()).find((migration) => migration.endsWith('_identity_limits_credits')) as string;
    try {
      // The database as the release before it left it: users, keys (one in debt) and their log rows.
      await cp(MIGRATIONS_DIR, migrationsDir, { recursive: true, filter: (source) => !source.includes(limitsMigration) });
      await ensureDatabase(url);
      await applyMigrations(url, migrationsDir);
      await query(url, "INSERT INTO users (id, username, password_hash, email, quota, updated_at) VALUES (1, 'old', 'x', 'old@example.com', 400, now()), (2, 'debtor', 'x', NULL, -5, now())");
      await query(
        url,
        `INSERT INTO tokens (id, user_id, name, key_hash, key_prefix, key_suffix, remain_quota, used_quota, updated_at) VALUES
           (1, 1, 'ci', 'h1', 'sk-a', 'zz', 100, 7, now()), (2, 2, 'old', 'h2', 'sk-b', 'yy', -3, 8, now())`,
      );
      await query(url, "INSERT INTO logs (user_id, type, quota) VALUES (1, 1, 407), (1, 2, -7), (2, 2, -5)");

      expect(await applyMigrations(url)).toEqual([limitsMigration]);

      expect(await query(url, 'SELECT id, username, email, quota::int, notify_type, quota_warning_threshold::int, webhook_url FROM users ORDER BY id')).toEqual([
        { id: 1, username: 'old', email: 'old@example.com', quota: 400, notify_type: '', quota_warning_threshold: 0, webhook_url: null },
        { id: 2, username: 'debtor', email: null, quota: -5, notify_type: '', quota_warning_threshold: 0, webhook_url: null },
      ]);
      expect(
        await query(url, 'SELECT id, remain_quota::int, used_quota::int, rpm_limit, tpm_limit, max_concurrency, budget_usd, budget_period, budget_used_quota::int, limits_set_by FROM tokens ORDER BY id'),
      ).toEqual([
        { id: 1, remain_quota: 100, used_quota: 7, rpm_limit: 0, tpm_limit: 0, max_concurrency: 0, budget_usd: null, budget_period: 'month', budget_used_quota: 0, limits_set_by: null },
        { id: 2, remain_quota: -3, used_quota: 8, rpm_limit: 0, tpm_limit: 0, max_concurrency: 0, budget_usd: null, budget_period: 'month', budget_used_quota: 0, limits_set_by: null },
      ]);
      expect(await query(url, 'SELECT count(*)::int AS n, sum(quota)::int AS total FROM logs')).toEqual([{ n: 3, total: 395 }]);
      await expect(query(url, "UPDATE tokens SET budget_period = 'year' WHERE id = 1")).rejects.toThrow(/tokens_budget_period_known/);
      await expect(query(url, 'UPDATE tokens SET rpm_limit = -1 WHERE id = 1')).rejects.toThrow(/tokens_limits_non_negative/);
      await expect(query(url, "UPDATE users SET notify_type = 'sms' WHERE id = 1")).rejects.toThrow(/users_notify_type_known/);
    } finally {
      await rm(migrationsDir, { recursive: true, force: true });
      await dropDatabase(name);
    }
  });
});

describe('logs_partitioned_by_month migration', () => {
  it('moves every log row into its month partition, keeping ids, the id sequence, the ledger and usage_buckets', async () => {
    const name = `mg_test_${randomBytes(6).toString('hex')}_partitions`;
    const url = withDatabase(runDatabaseUrl, name);
    const migrationsDir = await mkdtemp(join(tmpdir(), 'mg-partitions-'));
    const partitionMigration = (await migrationNames()).find((migration) => migration.endsWith('_logs_partitioned_by_month')) as string;
    try {
      // The database as the release before it left it: two users whose quota is the sum of their
      // rows, rows in three months with a month between them left empty, and usage buckets.
      await cp(MIGRATIONS_DIR, migrationsDir, { recursive: true, filter: (source) => !source.includes(partitionMigration) });
      await ensureDatabase(url);
      await applyMigrations(url, migrationsDir);
      await query(url, "INSERT INTO users (id, username, password_hash, quota, updated_at) VALUES (1, 'old', 'x', 900, now()), (2, 'debtor', 'x', -5, now())");
      await query(
        url,
        `INSERT INTO logs (user_id, created_at, type, content, model_name, quota, prompt_tokens, request_id, other) VALUES
           (1, '2025-11-30 23:59:59.999', 1, 'top-up', '', 1000, 0, NULL, NULL),
           (1, '2025-12-01 00:00:00', 2, '', 'gpt-a', -100, 7, 'req-1', '{"entry": "relay-1:1"}'),
           (2, '2025-12-15 12:00:00', 2, '', 'gpt-a', -5, 3, 'req-2', NULL),
           (1, '2026-02-10 08:00:00', 2, '', 'gpt-b', -57, 9, 'req-3', NULL),
           (1, now() AT TIME ZONE 'UTC', 3, 'admin edit', '', 0, 0, NULL, NULL)`,
      );
      await query(url, "INSERT INTO usage_buckets (user_id, bucket, model_name, requests, quota) VALUES (1, 1764547200, 'gpt-a', 1, 100)");
      // A gap in the ids, as an aborted insert leaves (the quota above is without that row).
      await query(url, 'DELETE FROM logs WHERE id = 4');
      await query(url, "INSERT INTO logs (user_id, created_at, type, quota) VALUES (1, '2026-02-11 00:00:00', 1, 0)");
      const rowsOf = (database: string) => query(database, 'SELECT to_jsonb(l) AS row FROM logs l ORDER BY id');
      const before = await rowsOf(url);
      const usageBefore = await query(url, 'SELECT * FROM usage_buckets');

      expect(await applyMigrations(url)).toEqual([partitionMigration]);

      expect(await rowsOf(url)).toEqual(before);
      expect(await query(url, 'SELECT * FROM usage_buckets')).toEqual(usageBefore);
      const ledger = createPrismaClient({ databaseUrl: url, maxConnections: 1 });
      try {
        expect(await ledgerMismatches(ledger)).toEqual([]);
      } finally {
        await ledger.$disconnect();
      }
      const months: string[] = [];
      const now = new Date();
      for (let month = Date.UTC(2025, 10); month <= Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2); ) {
        const at = new Date(month);
        months.push(`logs_${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, '0')}`);
        month = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1);
      }
      const partitions = await query<{ name: string }>(url, "SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'logs'::regclass ORDER BY 1");
      expect(partitions.map((row) => row.name)).toEqual([...months, 'logs_default'].sort());
      expect(await query(url, 'SELECT id::int, tableoid::regclass::text AS partition FROM logs WHERE id <= 3 ORDER BY id')).toEqual([
        { id: 1, partition: 'logs_202511' },
        { id: 2, partition: 'logs_202512' },
        { id: 3, partition: 'logs_202512' },
      ]);
      expect(await query(url, 'SELECT count(*)::int AS n FROM logs_default')).toEqual([{ n: 0 }]);

      // New rows continue the ids and land in their month; the constraints still hold.
      const [added] = await query<{ id: string; partition: string }>(
        url,
        "INSERT INTO logs (user_id, created_at, type, quota) VALUES (2, '2026-02-28 23:59:59.999', 4, 0) RETURNING id::text, tableoid::regclass::text AS partition",
      );
      expect(added).toEqual({ id: '7', partition: 'logs_202602' });
      await expect(query(url, 'INSERT INTO logs (user_id, type) VALUES (99, 1)')).rejects.toThrow(/logs_user_id_fkey/);
      await query(url, 'DELETE FROM users WHERE id = 2');
      expect(await query(url, 'SELECT count(*)::int AS n FROM logs WHERE user_id = 2')).toEqual([{ n: 0 }]);
      const indexes = await query<{ indexname: string }>(url, "SELECT indexname FROM pg_indexes WHERE tablename = 'logs' ORDER BY 1");
      expect(indexes.map((row) => row.indexname)).toEqual([
        'logs_created_at_idx', 'logs_pkey', 'logs_request_id_idx', 'logs_type_created_at_idx', 'logs_user_id_created_at_idx',
      ]);
    } finally {
      await rm(migrationsDir, { recursive: true, force: true });
      await dropDatabase(name);
    }
  });
});

describe('failures', () => {
  it('names the failing migration and leaves none of its statements applied', async () => {
    const name = `mg_test_${randomBytes(6).toString('hex')}_broken`;
    const url = withDatabase(runDatabaseUrl, name);
    const migrationsDir = await mkdtemp(join(tmpdir(), 'mg-broken-'));
    try {
      await mkdir(join(migrationsDir, '20300101000000_broken'));
      await writeFile(
        join(migrationsDir, '20300101000000_broken', 'migration.sql'),
        "CREATE TABLE \"half_done\" (\"note\" TEXT DEFAULT 'a;b');\nSELECT * FROM \"missing_table\";\n",
      );
      await ensureDatabase(url);
      await expect(applyMigrations(url, migrationsDir)).rejects.toThrow(/migration 20300101000000_broken failed: .*missing_table/);
      const tables = await query(url, "SELECT 1 FROM pg_tables WHERE tablename = 'half_done'");
      expect(tables).toEqual([]);
    } finally {
      await rm(migrationsDir, { recursive: true, force: true });
      await dropDatabase(name);
    }
  });

  it('says plainly when PostgreSQL is not reachable', async () => {
    const nowhere = 'postgresql://postgres:hunter2@127.0.0.1:1/modelgate';
    const expected = 'PostgreSQL is not reachable at 127.0.0.1:1; `docker compose -f docker-compose.yml -f infra/compose/dev.yml up -d postgres redis` provides it';
    await expect(ensureDatabase(nowhere)).rejects.toThrow(DatabaseUnreachableError);
    await expect(ensureDatabase(nowhere)).rejects.toThrow(expected);
    await expect(applyMigrations(nowhere)).rejects.toThrow(expected);
  });
});
