// A request-serving connection (createServiceRedis) with auto-pipelining, as the relay uses it, when
// the connection drops while pipelines are in flight: every command is answered (its reply or a
// connection error, none left waiting, so a caller can answer 503), nothing is thrown outside the
// callers (Jest fails the test on an uncaught exception), and the connection serves again once Redis
// answers. A short or missing pipeline reply here would make ioredis throw from a timer, which crashes
// a service, and leave the connection's later commands waiting forever.
import { type ScratchRedis, startScratchRedis, waitFor } from '@modelgate/testing/processes';
import { Redis } from 'ioredis';
import { closeRedis, createServiceRedis, SERVICE_REDIS_OPTIONS } from '../src/connections';

/** A server of this file's own (never the shared one), on a port set aside for it. */
const SCRATCH_PORT = 6383;
const KEY = 'mg-drop-test';
/** A script, as the relay's billing runs (ioredis sends EVAL on a new connection, then EVALSHA). */
const INCREMENT = { numberOfKeys: 1, lua: "return redis.call('INCR', KEYS[1])" };

type ScriptedRedis = Redis & { mgIncrement(key: string): Promise<number> };

let server: ScratchRedis;
let redis: ScriptedRedis;
let admin: Redis;

beforeAll(async () => {
  server = await startScratchRedis({ port: SCRATCH_PORT });
  redis = createServiceRedis(server.url, { enableAutoPipelining: true, lazyConnect: true }) as ScriptedRedis;
  redis.on('error', () => undefined);
  redis.defineCommand('mgIncrement', INCREMENT);
  await redis.connect();
  admin = new Redis(server.url, { maxRetriesPerRequest: 0 });
  admin.on('error', () => undefined);
});

afterAll(async () => {
  if (redis) await closeRedis(redis);
  if (admin) await closeRedis(admin);
  await server?.stop();
});

/** `count` commands issued in one event-loop turn, so ioredis sends them as one pipeline: scripts and plain commands alternately. */
function burst(count: number): Promise<unknown>[] {
  return Array.from({ length: count }, (_, i) => (i % 2 === 0 ? redis.mgIncrement(KEY) : redis.get(KEY)));
}

/** How each command ended ('ok' or its error message); fails if some are still unanswered after `withinMs`. */
async function outcomes(commands: Promise<unknown>[], withinMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const settled = Promise.all(commands.map((command) => command.then(() => 'ok', (err: Error) => err.message)));
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`commands still unanswered after ${withinMs} ms`)), withinMs);
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

async function expectServingAgain(): Promise<void> {
  await waitFor(async () => typeof (await redis.mgIncrement(KEY)) === 'number', 'the connection to serve again', 10_000, 50);
  expect(await outcomes(burst(200), 2_000)).toEqual(Array(200).fill('ok'));
}

it('answers every command of a pipeline cut half-way, the rest with an error, then serves again', async () => {
  const id = await redis.client('ID');
  // One pipeline: the server answers the first half, then blocks on BLPOP, where the cut comes.
  const commands = [...burst(100), redis.blpop(`${KEY}:never`, 0), ...burst(100)];
  await waitFor(async () => /^blocked_clients:1\r?$/m.test(await admin.info('clients')), 'the pipeline to block half-way', 2_000, 10);
  await admin.client('KILL', 'ID', id);

  const ends = await outcomes(commands, 1_000);
  expect(ends.slice(0, 100)).toEqual(Array(100).fill('ok'));
  expect(new Set(ends.slice(100))).toEqual(new Set(['Command aborted due to connection close']));
  await expectServingAgain();
});

it('answers every command with an error when the server stops answering, at once while it stays silent, and serves again', async () => {
  expect(await outcomes(burst(10), 2_000)).toEqual(Array(10).fill('ok'));
  const pid = server.pid!;
  process.kill(pid, 'SIGSTOP');
  try {
    // One pipeline sent and unanswered, and the next one waiting behind it in the client.
    const sent = burst(100);
    await tick();
    const waiting = burst(100);
    const started = performance.now();
    const ends = await outcomes([...sent, ...waiting], SERVICE_REDIS_OPTIONS.socketTimeout + 2_000);
    expect(ends).not.toContain('ok');
    expect(performance.now() - started).toBeGreaterThanOrEqual(SERVICE_REDIS_OPTIONS.socketTimeout - 100);

    // Given up on: later commands fail at once.
    const fast = performance.now();
    expect(await outcomes(burst(100), 1_000)).not.toContain('ok');
    expect(performance.now() - fast).toBeLessThan(500);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await expectServingAgain();
});
