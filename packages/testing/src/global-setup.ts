// Jest globalSetup (see jest.preset.cjs): gives the run a private database and Redis prefix,
// exported through process.env to the test workers, and recorded for global-teardown.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseUnreachableError, describeServer, isUnreachable } from '@modelgate/db';
import { testRedisUrl } from './redis';
import { createTestDatabase, randomSuffix, testServerUrl } from './test-database';
import { type TestRun, TEST_RUN_KEY } from './test-run';

const DATABASE_PACKAGES = ['@modelgate/db', '@modelgate/testing'];

/** Packages that can reach the database: the db and testing packages and those depending on them. */
function needsDatabase(rootDir: string): boolean {
  const manifest = JSON.parse(readFileSync(join(rootDir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const dependencies = { ...(manifest.dependencies as object), ...(manifest.devDependencies as object) };
  return DATABASE_PACKAGES.some((name) => manifest.name === name || name in dependencies);
}

export default async function globalSetup(_globalConfig: unknown, projectConfig: { rootDir: string }): Promise<void> {
  const run: TestRun = { serverUrl: testServerUrl(), redisUrl: testRedisUrl(), redisPrefix: `mgtest:${randomSuffix()}:` };
  if (needsDatabase(projectConfig.rootDir)) {
    try {
      const database = await createTestDatabase(run.serverUrl);
      run.databaseName = database.name;
      process.env.DATABASE_URL = database.url;
    } catch (err) {
      if (isUnreachable(err)) throw new DatabaseUnreachableError(describeServer(run.serverUrl));
      throw err;
    }
  }
  process.env.REDIS_URL = run.redisUrl;
  process.env.REDIS_PREFIX = run.redisPrefix;
  (globalThis as Record<string, unknown>)[TEST_RUN_KEY] = run;
}
