// Jest globalTeardown (see jest.preset.cjs): drops the run's database and deletes its Redis keys.
import { createTestRedis, deleteKeysWithPrefix } from './redis';
import { dropTestDatabase } from './test-database';
import { type TestRun, TEST_RUN_KEY } from './test-run';

export default async function globalTeardown(): Promise<void> {
  const run = (globalThis as Record<string, unknown>)[TEST_RUN_KEY] as TestRun | undefined;
  if (!run) return;
  const problems: string[] = [];
  if (run.databaseName) {
    await dropTestDatabase(run.databaseName, run.serverUrl).catch((err: Error) =>
      problems.push(`could not drop test database ${run.databaseName}: ${err.message}`),
    );
  }
  // A run that never touched Redis must not fail (or wait) because Redis is down.
  const redis = createTestRedis({ lazyConnect: true, connectTimeout: 2_000, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await deleteKeysWithPrefix(redis, run.redisPrefix);
  } catch (err) {
    problems.push(`could not delete Redis keys under ${run.redisPrefix}: ${(err as Error).message}`);
  } finally {
    redis.disconnect();
  }
  if (problems.length > 0) process.stderr.write(`[test teardown] ${problems.join('; ')}\n`);
}
