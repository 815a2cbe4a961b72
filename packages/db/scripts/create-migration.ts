// `pnpm db:migration:create <name>`: writes a migration taking the existing migrations to prisma/schema.prisma.
import { relative } from 'node:path';
import {
  DEFAULT_DATABASE_URL,
  DatabaseUnreachableError,
  diffSchemaAgainstMigrations,
  MIGRATIONS_DIR,
  writeMigration,
} from '../src/migrate';

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name || !/^[a-z0-9_]+$/.test(name)) {
    console.error('Usage: pnpm db:migration:create <name>   (lowercase letters, digits and "_")');
    process.exit(2);
  }
  // The existing migrations are replayed on a temporary shadow database on this server.
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const { sql } = await diffSchemaAgainstMigrations(databaseUrl);
  if (sql === null) {
    console.log('prisma/schema.prisma matches the existing migrations: nothing to change.');
    return;
  }
  const folder = await writeMigration(name, sql);
  console.log(`Wrote ${relative(process.cwd(), `${MIGRATIONS_DIR}/${folder}/migration.sql`)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof DatabaseUnreachableError ? err.message : `Could not create the migration: ${(err as Error).message}`);
  process.exit(1);
});
