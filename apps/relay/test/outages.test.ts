// Outages on the relay's real completion path (fake upstream, real Redis and PostgreSQL):
// with its Redis (the hot path's) down it answers 503 at once and recovers when Redis returns; with
// PostgreSQL down it keeps relaying and stays ready, and the ledger catches up afterwards. Readiness
// follows: Redis is required, PostgreSQL only reported.
import { cutTestDatabase } from '@modelgate/testing';
import { startFakeUpstream, type FakeUpstream } from '@modelgate/testing/fake-upstream';
import { type ScratchRedis, startScratchRedis, waitFor } from '@modelgate/testing/processes';
import { consumeLogs, createCustomer, type Customer, MODEL, openAiChannel, type RelayHarness, setUnitPrices, startRelay } from './harness';

jest.setTimeout(60_000);

/** Set aside for this file's own Redis server (never the shared one on 6379). */
const SCRATCH_REDIS_PORT = 6391;
/** "Well under a second" with room for a busy 2-core machine; the unfixed relay took 2 to 6 s. */
const FAST_MS = 1_000;

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

async function withCustomer(relay: RelayHarness): Promise<Customer> {
  await setUnitPrices(relay.prisma, [MODEL, 'gemini-2.5-flash']);
  await openAiChannel(relay.prisma, upstream.url);
  await openAiChannel(relay.prisma, upstream.url, { type: 24, models: 'gemini-2.5-flash', key: 'gemini-channel-key' });
  await relay.reloadCaches();
  return createCustomer(relay.prisma);
}

interface Timed {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

async function timed(url: string, init: RequestInit): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  const body = (res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : { text }) as Record<string, unknown>;
  return { status: res.status, body, ms: performance.now() - started };
}

function complete(relay: RelayHarness, customer: Customer, stream = false): Promise<Timed> {
  return timed(`${relay.url}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt: [1, 2, 3], max_tokens: 5, stream }),
  });
}

function generate(relay: RelayHarness, customer: Customer): Promise<Timed> {
  return timed(`${relay.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: 'POST',
    headers: { 'x-goog-api-key': customer.key, 'content-type': 'application/json' },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
  });
}

/** A relay on this file's own Redis server, for one describe block (set up and torn down around it). */
function relayOnScratchRedis(): { redis: ScratchRedis; relay: RelayHarness } {
  const parts = {} as { redis: ScratchRedis; relay: RelayHarness };
  beforeAll(async () => {
    parts.redis = await startScratchRedis({ port: SCRATCH_REDIS_PORT });
    parts.relay = await startRelay({}, { redisUrl: parts.redis.url });
    await parts.relay.reset();
  });
  afterAll(async () => {
    await parts.relay?.close();
    await parts.redis?.stop();
  });
  return parts;
}

describe('with Redis down', () => {
  const scratch = relayOnScratchRedis();

  it('answers 503 in well under a second, in the caller dialect, and serves again once Redis is back', async () => {
    const { relay, redis } = scratch;
    const customer = await withCustomer(relay);
    expect((await complete(relay, customer)).status).toBe(200);
    // Written before the outage: this Redis keeps nothing across its restart.
    await relay.relay.ledger.flush();

    await redis.stop();
    // Spread over a few seconds: ioredis's reconnection delays grow while Redis stays away.
    for (let round = 0; round < 4; round++) {
      const answer = await complete(relay, customer, round % 2 === 1);
      expect({ status: answer.status, code: (answer.body.error as { code?: string }).code }).toEqual({ status: 503, code: 'service_unavailable' });
      expect(answer.ms).toBeLessThan(FAST_MS);
      await new Promise((resolve) => setTimeout(resolve, 800));
    }
    const google = await generate(relay, customer);
    expect(google).toMatchObject({ status: 503, body: { error: { code: 503, status: 'UNAVAILABLE' } } });
    expect(google.ms).toBeLessThan(FAST_MS);
    // Redis is required: out of rotation (at once) until it is back.
    const ready = await timed(`${relay.url}/readyz`, {});
    expect(ready).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { redis: 'down' } } });
    expect(ready.ms).toBeLessThan(FAST_MS);

    // Back, empty (a restart without persistence): balances are seeded again from PostgreSQL.
    await redis.start();
    await waitFor(async () => (await complete(relay, customer)).status === 200, 'completions to recover', 10_000, 100);
    await relay.relay.ledger.flush();
    expect(await consumeLogs(relay.prisma)).toHaveLength(2);
  });
});

describe('with Redis frozen (connected, never answering)', () => {
  const scratch = relayOnScratchRedis();

  it('gives up on the silent connection after 2 s, then answers 503 at once until Redis answers again', async () => {
    const { relay, redis } = scratch;
    const customer = await withCustomer(relay);
    expect((await complete(relay, customer)).status).toBe(200);
    await relay.relay.ledger.flush();

    process.kill(redis.pid!, 'SIGSTOP');
    try {
      // The call caught on the frozen connection waits for the socket timeout, not forever.
      const caught = await complete(relay, customer);
      expect(caught.status).toBe(503);
      expect(caught.ms).toBeLessThan(2_000 + FAST_MS);
      for (let round = 0; round < 3; round++) {
        const answer = await complete(relay, customer);
        expect(answer.status).toBe(503);
        expect(answer.ms).toBeLessThan(FAST_MS);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    } finally {
      process.kill(redis.pid!, 'SIGCONT');
    }
    await waitFor(async () => (await complete(relay, customer)).status === 200, 'completions to recover', 10_000, 100);
  });
});

describe('with PostgreSQL down', () => {
  let relay: RelayHarness;
  beforeAll(async () => {
    relay = await startRelay();
    await relay.reset();
  });
  afterAll(() => relay?.close());

  it('keeps relaying from its caches and Redis, and writes the charges once the database is back', async () => {
    const customer = await withCustomer(relay);
    // The first call loads the key and seeds the balance mirrors: the last database reads it needs.
    expect((await complete(relay, customer)).status).toBe(200);
    await relay.relay.ledger.flush();

    const outage = await cutTestDatabase();
    try {
      expect((await complete(relay, customer)).status).toBe(200);
      expect((await complete(relay, customer, true)).status).toBe(200);
      // PostgreSQL is only reported: the relay stays in rotation.
      expect(await timed(`${relay.url}/readyz`, {})).toMatchObject({ status: 200, body: { status: 'ok', checks: { redis: 'ok' } } });
      const health = await timed(`${relay.url}/health`, {});
      expect(health).toMatchObject({
        status: 200,
        body: { status: 'degraded', checks: { redis: { status: 'ok', required: true }, database: { status: 'down', required: false } } },
      });
    } finally {
      await outage.restore();
    }
    await waitFor(async () => (await consumeLogs(relay.prisma)).length === 3, 'the ledger to catch up', 10_000, 100);
  });
});
