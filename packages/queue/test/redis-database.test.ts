// A REDIS_URL database index the server does not have must stop the service at boot: ioredis itself
// only emits an error and goes on in database 0.
import { freePort, type ScratchRedis, startScratchRedis } from '@modelgate/testing/processes';
import { Redis } from 'ioredis';
import { closeRedis, createServiceRedis } from '../src/connections';
import { assertRedisDatabase } from '../src/redis-database';

/** A second server with 4 databases (0..3), on a port of its own so the shared one is never touched. */
const SCRATCH_PORT = 6395;
let server: ScratchRedis;
const clients: Redis[] = [];

function client(path: string): Redis {
  const redis = new Redis(`${server.url}${path}`, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  clients.push(redis);
  return redis;
}

beforeAll(async () => {
  server = await startScratchRedis({ port: SCRATCH_PORT, serverArgs: ['--databases', '4'] });
});

afterAll(async () => {
  await Promise.all(clients.map(closeRedis));
  await server?.stop();
});

it('refuses a database index the server does not have, naming REDIS_URL', async () => {
  await expect(assertRedisDatabase(client('/9'))).rejects.toThrow(
    `REDIS_URL selects database 9, which the Redis server at 127.0.0.1:${SCRATCH_PORT} refuses (ERR DB index is out of range)`,
  );
});

it('accepts the databases the server has, and writes go to the one selected', async () => {
  const selected = client('/3');
  await assertRedisDatabase(selected);
  await assertRedisDatabase(client(''));
  await selected.set('mg-db-check', 'in database 3');
  expect(await client('/0').get('mg-db-check')).toBeNull();
  expect(await client('/3').get('mg-db-check')).toBe('in database 3');
});

it('waits for the first connection of a fail-fast service connection (no offline queue) before checking', async () => {
  const redis = createServiceRedis(`${server.url}/3`);
  redis.on('error', () => undefined);
  clients.push(redis);
  await assertRedisDatabase(redis);
  await expect(redis.set('mg-db-check', 'service connection')).resolves.toBe('OK');
});

it('says which server it could not ask when Redis does not answer', async () => {
  const unreachable = new Redis(`redis://127.0.0.1:${await freePort()}/2`, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  unreachable.on('error', () => undefined);
  clients.push(unreachable);
  await expect(assertRedisDatabase(unreachable)).rejects.toThrow(
    /^could not check that the Redis server at 127\.0\.0\.1:\d+ has database 2 \(REDIS_URL\): /,
  );
});
