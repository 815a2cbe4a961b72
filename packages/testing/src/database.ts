import { createPrismaClient, type PrismaClient } from '@modelgate/db';
import { TEST_DATABASE_PREFIX } from './test-database';

/** The private database of this test run, set by the Jest global setup. */
export function testDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url || !new URL(url).pathname.slice(1).startsWith(TEST_DATABASE_PREFIX)) {
    throw new Error('DATABASE_URL is not a test database: run tests through the shared Jest preset');
  }
  return url;
}

/** A Prisma client on the run's private database; `$disconnect()` it in afterAll. */
export function createTestPrisma(): PrismaClient {
  return createPrismaClient({ databaseUrl: testDatabaseUrl(), maxConnections: 5 });
}

/** Empties every table (ids restart at 1) except the migration history. Refuses any non-test database. */
export async function resetDatabase(prisma: PrismaClient): Promise<void> {
  const [row] = await prisma.$queryRawUnsafe<{ name: string }[]>('SELECT current_database() AS name');
  const name = row?.name ?? '';
  if (!name.startsWith(TEST_DATABASE_PREFIX)) throw new Error(`refusing to empty "${name}": not a test database`);
  const tables = await prisma.$queryRawUnsafe<{ tablename: string }[]>(
    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations'",
  );
  if (tables.length === 0) return;
  const list = tables.map(({ tablename }) => `"${tablename.replace(/"/g, '""')}"`).join(', ');
  await prisma.$executeRawUnsafe(`TRUNCATE TABLE ${list} RESTART IDENTITY CASCADE`);
}
