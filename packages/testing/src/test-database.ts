// Private, migrated databases for test runs. Each run clones a template database that already has
// every migration applied (one template per migration set), which takes a fraction of a second.
import { createHash, randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import {
  applyMigrations,
  databaseExists,
  DEFAULT_DATABASE_URL,
  migrationsHash,
  quoteIdentifier,
  runOnServer,
  withDatabase,
} from '@modelgate/db';

export const TEST_DATABASE_PREFIX = 'mg_test_';
const BUILD_PREFIX = 'mg_tplbuild_';

/**
 * Templates are scoped by checkout (a hash of its path), so a checkout only ever prunes its own
 * stale templates and two checkouts with different migrations can test against one server at once.
 */
const CHECKOUT_SCOPE = createHash('sha256').update(resolve(__dirname, '../../..')).digest('hex').slice(0, 8);
export const TEMPLATE_PREFIX = `mg_tpl_${CHECKOUT_SCOPE}_`;

const DUPLICATE_DATABASE = '42P04';
const INVALID_CATALOG_NAME = '3D000';
const OBJECT_IN_USE = '55006';

/** The server tests run against: any database URL on it will do, only its host and credentials count. */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
}

export function randomSuffix(): string {
  return randomBytes(6).toString('hex');
}

function errorCode(err: unknown): string | undefined {
  return (err as { code?: string }).code;
}

/**
 * Builds the template for the current migrations unless it exists. It is built under a temporary
 * name and renamed when complete, so a template that exists is always fully migrated, and
 * concurrent runs that race to build it simply keep the first.
 */
async function ensureTemplate(serverUrl: string): Promise<string> {
  const template = `${TEMPLATE_PREFIX}${(await migrationsHash()).slice(0, 16)}`;
  if (await databaseExists(serverUrl, template)) return template;

  const build = `${BUILD_PREFIX}${randomSuffix()}`;
  await runOnServer(serverUrl, `CREATE DATABASE ${quoteIdentifier(build)}`);
  try {
    await applyMigrations(withDatabase(serverUrl, build));
    await runOnServer(serverUrl, `ALTER DATABASE ${quoteIdentifier(build)} RENAME TO ${quoteIdentifier(template)}`);
  } catch (err) {
    await runOnServer(serverUrl, `DROP DATABASE IF EXISTS ${quoteIdentifier(build)} WITH (FORCE)`);
    if (errorCode(err) !== DUPLICATE_DATABASE) throw err;
  }
  await dropStaleTemplates(serverUrl, template);
  return template;
}

/**
 * This checkout's templates of older migration sets; one still being cloned by another run stays
 * (DROP refuses). Other checkouts' templates are never touched.
 */
export async function dropStaleTemplates(serverUrl: string, current: string): Promise<void> {
  const { rows } = await runOnServer(
    serverUrl,
    'SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2',
    [TEMPLATE_PREFIX, current],
  );
  for (const { datname } of rows as { datname: string }[]) {
    await runOnServer(serverUrl, `DROP DATABASE IF EXISTS ${quoteIdentifier(datname)}`).catch(() => undefined);
  }
}

export interface TestDatabase {
  name: string;
  url: string;
}

/** Creates `mg_test_<random>` with every migration applied. */
export async function createTestDatabase(serverUrl = testServerUrl()): Promise<TestDatabase> {
  const name = `${TEST_DATABASE_PREFIX}${randomSuffix()}`;
  for (let attempt = 1; ; attempt++) {
    const template = await ensureTemplate(serverUrl);
    try {
      await runOnServer(serverUrl, `CREATE DATABASE ${quoteIdentifier(name)} TEMPLATE ${quoteIdentifier(template)}`);
      return { name, url: withDatabase(serverUrl, name) };
    } catch (err) {
      // Another run is cloning or pruning the template at this instant: try again shortly.
      const transient = errorCode(err) === OBJECT_IN_USE || errorCode(err) === INVALID_CATALOG_NAME;
      if (!transient || attempt >= 10) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

export async function dropTestDatabase(name: string, serverUrl = testServerUrl()): Promise<void> {
  if (!name.startsWith(TEST_DATABASE_PREFIX)) throw new Error(`refusing to drop "${name}": not a test database`);
  await runOnServer(serverUrl, `DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
}
