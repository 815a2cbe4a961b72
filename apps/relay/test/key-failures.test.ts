// docs/api.md 3.7: failed key checks (unknown, malformed, disabled keys) are limited per client
// address, 60 a minute by default, shared by every relay through Redis; past the limit an address
// gets 429 in the route's dialect and its keys cost no PostgreSQL query.
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '@modelgate/db';
import { createTestPrisma, redisPrefix } from '@modelgate/testing';
import { createCustomer, type RelayHarness, startRelay } from './harness';

/** The addresses the edge names in X-Forwarded-For (the relay believes its loopback peers). */
const GUESSER = '203.0.113.10';
const NEIGHBOUR = '198.51.100.20';
const DEFAULT_LIMIT = 60;

interface CountingRelay {
  harness: RelayHarness;
  /** Every database operation the relay made (Prisma is its only way to PostgreSQL). */
  queries: number;
}

async function countingRelay(): Promise<CountingRelay> {
  const relay = { queries: 0 } as CountingRelay;
  const prisma = createTestPrisma().$extends({
    query: {
      $allOperations({ args, query }) {
        relay.queries += 1;
        return query(args);
      },
    },
  }) as unknown as PrismaClient;
  relay.harness = await startRelay({}, { prisma });
  return relay;
}

let relay: CountingRelay;
/** A second replica on the same PostgreSQL and Redis. */
let replica: CountingRelay;

beforeAll(async () => {
  relay = await countingRelay();
  replica = await countingRelay();
  await relay.harness.reset();
});
afterAll(async () => {
  await relay?.harness.close();
  await replica?.harness.close();
});

const randomKey = () => `sk-${randomBytes(24).toString('hex')}`;

type Dialect = 'openai' | 'anthropic' | 'gemini';

const CALLS: Record<Dialect, { path: string; keyHeader: (key: string) => Record<string, string> }> = {
  openai: { path: '/v1/chat/completions', keyHeader: (key) => ({ authorization: `Bearer ${key}` }) },
  anthropic: { path: '/v1/messages', keyHeader: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }) },
  gemini: { path: '/v1beta/models/gemini-2.5-flash:generateContent', keyHeader: (key) => ({ 'x-goog-api-key': key }) },
};

async function call(target: CountingRelay, dialect: Dialect, key: string, from: string) {
  const { path, keyHeader } = CALLS[dialect];
  const response = await fetch(`${target.harness.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from, ...keyHeader(key) },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> };
}

async function listModels(target: CountingRelay, key: string, from: string): Promise<number> {
  const response = await fetch(`${target.harness.url}/v1/models`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': from } });
  await response.arrayBuffer();
  return response.status;
}

function expectRetryAfter(value: string | null): void {
  expect(Number(value)).toBeGreaterThanOrEqual(1);
  expect(Number(value)).toBeLessThanOrEqual(60);
}

test('past 60 failed key checks a minute, an address gets 429 in every dialect without database lookups, on every relay; others are served', async () => {
  const valid = await createCustomer(relay.harness.prisma);
  const disabled = await createCustomer(relay.harness.prisma, { status: 2 });

  // Unknown, malformed and disabled keys all count, each still answered 401 up to the limit.
  const failures = [...Array.from({ length: DEFAULT_LIMIT - 2 }, randomKey), 'sk-not-a-real-key', disabled.key];
  const queriesAtStart = relay.queries;
  for (const key of failures) expect((await call(relay, 'openai', key, GUESSER)).status).toBe(401);
  // Up to the limit each unknown key was looked up: the count sees every lookup.
  expect(relay.queries - queriesAtStart).toBeGreaterThanOrEqual(DEFAULT_LIMIT - 2);
  expect(await relay.harness.redis.keys(`${redisPrefix()}rl:key-failures*${GUESSER}`)).toHaveLength(1);

  const queriesBefore = relay.queries;
  const openai = await call(relay, 'openai', randomKey(), GUESSER);
  expect(openai.status).toBe(429);
  expect(openai.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
  expectRetryAfter(openai.retryAfter);
  const anthropic = await call(relay, 'anthropic', randomKey(), GUESSER);
  expect(anthropic.status).toBe(429);
  expect(anthropic.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  expectRetryAfter(anthropic.retryAfter);
  const google = await call(relay, 'gemini', randomKey(), GUESSER);
  expect(google.status).toBe(429);
  expect(google.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
  expectRetryAfter(google.retryAfter);
  for (let i = 0; i < 20; i++) expect((await call(relay, 'openai', randomKey(), GUESSER)).status).toBe(429);
  // A key the relay has never seen, from that address: refused before the database is asked.
  expect((await call(relay, 'openai', valid.key, GUESSER)).status).toBe(429);
  expect(relay.queries).toBe(queriesBefore);

  // Another relay knows from Redis: no lookup there either.
  const replicaQueriesBefore = replica.queries;
  expect((await call(replica, 'openai', randomKey(), GUESSER)).status).toBe(429);
  expect(replica.queries).toBe(replicaQueriesBefore);

  // Another address is judged on its own: an unknown key is a plain 401, a valid key works.
  expect((await call(relay, 'openai', randomKey(), NEIGHBOUR)).status).toBe(401);
  expect(await listModels(relay, valid.key, NEIGHBOUR)).toBe(200);
  expect(await listModels(replica, valid.key, NEIGHBOUR)).toBe(200);
});

test('valid keys are never counted, however many calls an address makes', async () => {
  const valid = await createCustomer(relay.harness.prisma);
  const address = '192.0.2.33';
  for (let i = 0; i < DEFAULT_LIMIT + 10; i++) expect(await listModels(relay, valid.key, address)).toBe(200);
  // The first call's lookup took a point up front and gave it back once the key proved good.
  const counters = await relay.harness.redis.keys(`${redisPrefix()}rl:key-failures*${address}`);
  for (const counter of counters) expect(await relay.harness.redis.get(counter)).toBe('0');
});

test('concurrent guesses from one address run no more database lookups than the limit, across relays', async () => {
  const address = '203.0.113.77';
  const queriesBefore = relay.queries + replica.queries;
  const statuses = await Promise.all(
    Array.from({ length: DEFAULT_LIMIT * 2 }, (_, i) => call(i % 2 === 0 ? relay : replica, 'openai', randomKey(), address).then((answer) => answer.status)),
  );
  expect(statuses.filter((status) => status === 401)).toHaveLength(DEFAULT_LIMIT);
  expect(statuses.filter((status) => status === 429)).toHaveLength(DEFAULT_LIMIT);
  // One lookup per unknown key at most: the ones past the limit never reached PostgreSQL.
  expect(relay.queries + replica.queries - queriesBefore).toBeLessThanOrEqual(DEFAULT_LIMIT);
});
