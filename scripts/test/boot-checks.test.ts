// Relay, account and worker (their sources, one process each) refuse to start, with one line naming
// the cause, where they would otherwise run on wrong ground: a Redis database index the server does
// not have (ioredis would silently use database 0), or a database without this release's migrations.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ensureDatabase, RELEASE_MIGRATIONS, withDatabase } from '@modelgate/db';
import { dropTestDatabase, testDatabaseUrl } from '@modelgate/testing';
import { freePort, type ScratchRedis, startScratchRedis } from '@modelgate/testing/processes';

jest.setTimeout(30_000);

const SERVICES = ['relay', 'account', 'worker'] as const;
/** A second Redis server with databases 0..3 only, on a port of its own. */
const SCRATCH_REDIS_PORT = 6396;

let redis: ScratchRedis;

/** Starts the service with `env` and returns how it ended (it must end by itself within the timeout). */
async function boot(name: (typeof SERVICES)[number], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../../apps', name, 'src/index.ts')], {
    env: {
      ...process.env,
      RELAY_PORT: String(await freePort()),
      ACCOUNT_PORT: String(await freePort()),
      WORKER_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, stderr };
}

beforeAll(async () => {
  redis = await startScratchRedis({ port: SCRATCH_REDIS_PORT, serverArgs: ['--databases', '4'] });
});

afterAll(async () => {
  await redis?.stop();
});

it('refuse a REDIS_URL database index the server does not have', async () => {
  const results = await Promise.all(SERVICES.map((name) => boot(name, { REDIS_URL: `${redis.url}/9` })));
  expect(results).toEqual(
    SERVICES.map((name) => ({
      code: 1,
      stderr:
        `[${name}] cannot start: REDIS_URL selects database 9, which the Redis server at 127.0.0.1:${SCRATCH_REDIS_PORT} ` +
        "refuses (ERR DB index is out of range): use an index below the server's `databases` setting (16 by default)\n",
    })),
  );
});

it('refuse a database whose migrations are not applied, saying which and how to apply them', async () => {
  const name = `mg_test_${randomBytes(6).toString('hex')}_unmigrated`;
  const databaseUrl = withDatabase(testDatabaseUrl(), name);
  await ensureDatabase(databaseUrl);
  try {
    const results = await Promise.all(SERVICES.map((service) => boot(service, { DATABASE_URL: databaseUrl })));
    expect(results).toEqual(
      SERVICES.map((service) => ({
        code: 1,
        stderr:
          `[${service}] cannot start: database "${name}" lacks ${RELEASE_MIGRATIONS.length} migration(s) of this release ` +
          `(${RELEASE_MIGRATIONS.join(', ')}): apply them with \`pnpm db:migrate\` ` +
          '(containers: the migrate image; Kubernetes: the migrate Job)\n',
      })),
    );
  } finally {
    await dropTestDatabase(name);
  }
});
