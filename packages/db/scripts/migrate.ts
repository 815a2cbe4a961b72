// `pnpm db:migrate`: creates the database in DATABASE_URL if missing, then applies pending migrations.
import { applyMigrations, DEFAULT_DATABASE_URL, DatabaseUnreachableError, databaseName, ensureDatabase } from '../src/migrate';

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const name = databaseName(databaseUrl);
  if (await ensureDatabase(databaseUrl)) console.log(`Created database "${name}".`);
  const applied = await applyMigrations(databaseUrl);
  if (applied.length === 0) console.log(`Database "${name}" is up to date.`);
  else console.log(`Applied to "${name}":\n${applied.map((migration) => `  ${migration}`).join('\n')}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof DatabaseUnreachableError ? err.message : `Migration failed: ${(err as Error).message}`);
  process.exit(1);
});
