// A real PostgreSQL outage for fault tests, confined to the run's private database: the shared
// server keeps serving every other database (other runs, other checkouts).
import { databaseName, quoteIdentifier, runOnServer } from '@modelgate/db';
import { testDatabaseUrl } from './database';

export interface DatabaseOutage {
  /** Lets connections in again; the services' pools reconnect on their own. */
  restore(): Promise<void>;
}

/**
 * Takes this run's database away: new connections are refused (`ALLOW_CONNECTIONS false`, SQLSTATE
 * 55000) and every open session is terminated (57P01), as in a server restart or failover. Always
 * `restore()` (in a `finally`); the run's teardown drops the database either way.
 */
export async function cutTestDatabase(): Promise<DatabaseOutage> {
  // testDatabaseUrl() refuses anything but a test database.
  const url = testDatabaseUrl();
  const database = databaseName(url);
  await runOnServer(url, `ALTER DATABASE ${quoteIdentifier(database)} ALLOW_CONNECTIONS false`);
  await runOnServer(url, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
  return {
    async restore() {
      await runOnServer(url, `ALTER DATABASE ${quoteIdentifier(database)} ALLOW_CONNECTIONS true`);
    },
  };
}
