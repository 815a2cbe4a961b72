export * from './client';
export * from './crypto';
export {
  type BalanceChange,
  type BalanceCrossing,
  type BalancesAfter,
  changeBalance,
  chargeConsumeBatch,
  type ConsumeRow,
  type LedgerMismatch,
  ledgerMismatches,
  type UserBalanceField,
} from './ledger';
export {
  applyMigrations,
  assertMigrationsApplied,
  DatabaseUnreachableError,
  databaseExists,
  databaseName,
  DEFAULT_DATABASE_URL,
  describeServer,
  diffSchemaAgainstMigrations,
  ensureDatabase,
  isUnreachable,
  MIGRATIONS_DIR,
  migrationNames,
  migrationsHash,
  PendingMigrationsError,
  pendingMigrations,
  SCHEMA_PATH,
  withDatabase,
  writeMigration,
} from './migrate';
export { quoteIdentifier, runOnServer, SchemaEngineError } from './schema-engine';
export { RELEASE_MIGRATIONS } from './generated/migrations';
export { Prisma, PrismaClient } from './generated/prisma/client';
export type * from './generated/prisma/models';
