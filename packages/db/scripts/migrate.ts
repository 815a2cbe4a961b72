// `pnpm db:migrate` (and the migrate image): creates the database in DATABASE_URL if missing, then
// applies pending migrations.
//   --check  changes nothing: lists the pending migrations, exit code 1 when there are any.
//   --wait   changes nothing: waits until every migration in the folder is applied (by someone else,
//            e.g. the Kubernetes migrate Job), then exits 0. The services' init containers run it.
import {
  applyMigrations,
  DEFAULT_DATABASE_URL,
  DatabaseUnreachableError,
  databaseName,
  ensureDatabase,
  migrationNames,
  pendingMigrations,
} from '../src/migrate';

const WAIT_POLL_MS = 2_000;
/** A wait that keeps seeing the same state says so again this often. */
const WAIT_REPORT_MS = 30_000;

async function migrate(databaseUrl: string, name: string): Promise<void> {
  if (await ensureDatabase(databaseUrl)) console.log(`Created database "${name}".`);
  const applied = await applyMigrations(databaseUrl);
  if (applied.length === 0) console.log(`Database "${name}" is up to date.`);
  else console.log(`Applied to "${name}":\n${applied.map((migration) => `  ${migration}`).join('\n')}`);
}

async function check(databaseUrl: string, name: string): Promise<void> {
  const pending = await pendingMigrations(databaseUrl, await migrationNames());
  if (pending.length === 0) {
    console.log(`Database "${name}" is up to date.`);
    return;
  }
  console.log(`Database "${name}" lacks ${pending.length} migration(s):\n${pending.map((m) => `  ${m}`).join('\n')}`);
  process.exitCode = 1;
}

async function waitUntilApplied(databaseUrl: string, name: string): Promise<void> {
  const expected = await migrationNames();
  let reported = '';
  let reportedAt = 0;
  for (;;) {
    let state: string;
    try {
      const pending = await pendingMigrations(databaseUrl, expected);
      if (pending.length === 0) {
        console.log(`Database "${name}" has every migration of this release (${expected.length}).`);
        return;
      }
      state = `${pending.length} pending (${pending.join(', ')}); the migrate job applies them`;
    } catch (err) {
      state = err instanceof DatabaseUnreachableError ? err.message : `cannot read the migration history: ${(err as Error).message}`;
    }
    if (state !== reported || Date.now() - reportedAt >= WAIT_REPORT_MS) {
      console.log(`Waiting for the migrations of database "${name}": ${state}`);
      reported = state;
      reportedAt = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const name = databaseName(databaseUrl);
  const [mode, ...extra] = process.argv.slice(2);
  if (mode === '--wait' && extra.length === 0) await waitUntilApplied(databaseUrl, name);
  else if (mode === '--check' && extra.length === 0) await check(databaseUrl, name);
  else if (mode === undefined) await migrate(databaseUrl, name);
  else {
    console.error('Usage: pnpm db:migrate [--check | --wait]');
    process.exitCode = 2;
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof DatabaseUnreachableError ? err.message : `Migration failed: ${(err as Error).message}`);
  process.exit(1);
});
