// docs/api.md 3.9.3, 3.9.4: while a key is far from its limits, a relay takes slices of them (and of
// its budget) in one admission and admits the next calls into them without asking Redis; what they
// leave unused goes back within about two seconds. Near a limit every call is counted in Redis, so
// no number of relays ever admits more than the limit.
import { redisPrefix, setOption } from '@modelgate/testing';
import { consumeLogs, createCustomer, eventually, harness, MODEL, openAiChannel, type RelayHarness, relaySuite, resetSuite, setUnitPrices, startRelay, upstream } from './harness';

relaySuite();

let second: RelayHarness;

/** A grant goes back GRANT_MS after it was made, checked every GRANT_MS: within about 2 s. */
const GIVEN_BACK_MS = 4_000;
const QUOTA_PER_UNIT = 1000;

beforeAll(async () => {
  second = await startRelay();
});

afterAll(async () => {
  await second?.close();
});

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma);
  await setOption(harness.prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
  await openAiChannel(harness.prisma, upstream.url);
  await harness.reloadCaches();
  await second.reloadCaches();
});

function complete(key: string, { url = harness.url, stream = false } = {}): Promise<Response> {
  return fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: MODEL, prompt: 'hello', max_tokens: 5, stream }),
  });
}

function header(response: Response, name: string): number {
  return Number(response.headers.get(name));
}

function keyNames(userId: number, tokenId: number) {
  const subject = `${redisPrefix()}lim:{u${userId}}:k${tokenId}`;
  return { window: `${subject}:w`, leases: `${subject}:c`, slots: `${subject}:s`, budgets: `${redisPrefix()}lim:{u${userId}}:k${tokenId}:b:*` };
}

async function requestsCounted(window: string): Promise<number> {
  return Number((await harness.redis.hget(window, 'r')) ?? '0');
}

it('counts a slice of a roomy limit once, admits the next calls into it with falling remaining counts, and gives back what they left', async () => {
  const customer = await createCustomer(harness.prisma, { rpmLimit: 1000, tpmLimit: 1_000_000 });
  const { window } = keyNames(customer.userId, customer.tokenId);
  const answers: Response[] = [];
  for (let i = 0; i < 4; i++) answers.push(await complete(customer.key));
  expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  expect(answers.map((answer) => header(answer, 'x-ratelimit-remaining-requests'))).toEqual([999, 998, 997, 996]);
  // The first call, and the slice (1000 / 20) the next three came out of.
  expect(await requestsCounted(window)).toBe(1 + 50);

  await eventually(async () => expect(await requestsCounted(window)).toBe(4), GIVEN_BACK_MS);
  // The tokens counted are the calls' actual tokens: estimates corrected, the slice's rest given back.
  await harness.relay.ledger.flush();
  const used = (await consumeLogs(harness.prisma)).reduce((sum, row) => sum + row.promptTokens + row.completionTokens, 0);
  expect(Number(await harness.redis.hget(window, 't'))).toBe(used);
});

it('never admits more than rpm_limit over two relays, and the whole limit once the slices are back', async () => {
  const limit = 100;
  const customer = await createCustomer(harness.prisma, { rpmLimit: limit });
  const wave = (count: number) => Promise.all(Array.from({ length: count }, (_, i) => complete(customer.key, { url: i % 2 === 0 ? harness.url : second.url })));
  let admitted = 0;
  for (let round = 0; round < 6; round++) {
    const answers = await wave(25);
    admitted += answers.filter((answer) => answer.status === 200).length;
    expect(answers.every((answer) => answer.status === 200 || answer.status === 429)).toBe(true);
    expect(admitted).toBeLessThanOrEqual(limit);
  }
  expect(admitted).toBeGreaterThanOrEqual(limit - 20);

  // Once every relay gave its slices back, the window holds exactly the calls admitted, and the rest
  // of the limit is admitted one by one.
  const { window } = keyNames(customer.userId, customer.tokenId);
  await eventually(async () => expect(await requestsCounted(window)).toBe(admitted), GIVEN_BACK_MS);
  const last = await wave(30);
  admitted += last.filter((answer) => answer.status === 200).length;
  expect(admitted).toBe(limit);
  expect(upstream.requests).toHaveLength(limit);
  await harness.relay.ledger.flush();
  await second.relay.ledger.flush();
  expect((await consumeLogs(harness.prisma)).filter((row) => row.tokenId === customer.tokenId)).toHaveLength(limit);
});

it('holds a slice of max_concurrency for the relay, and hands its calls still in flight leases of their own when it goes back', async () => {
  const customer = await createCustomer(harness.prisma, { maxConcurrency: 40 });
  const { leases, slots } = keyNames(customer.userId, customer.tokenId);
  upstream.setMode('slowDrip', { chunks: 12, chunkDelayMs: 400 });
  const streams = await Promise.all([0, 1, 2].map(async (i) => {
    // The first call takes the grant; the others come after it.
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100 * i));
    const response = await complete(customer.key, { stream: true });
    expect(response.status).toBe(200);
    return response;
  }));
  // The first call's own lease, and the grant's 2 slots (40 / 20) the other two are in.
  expect(await harness.redis.zcard(leases)).toBe(1);
  expect(Object.values(await harness.redis.hgetall(slots))).toEqual([expect.stringMatching(/^2:\d+$/)]);

  // The grant goes back while the calls stream: its slots go, its two calls take leases.
  await eventually(async () => expect(await harness.redis.hlen(slots)).toBe(0), GIVEN_BACK_MS);
  expect(await harness.redis.zcard(leases)).toBe(3);

  await Promise.all(streams.map((response) => response.text()));
  await eventually(async () => expect(await harness.redis.zcard(leases)).toBe(0), GIVEN_BACK_MS);
});

it("keeps a budget's spend exact through a grant: the ledger's charges, nothing left held", async () => {
  // Room for well over twenty reservations: the calls after the first are held on the grant's slice.
  const customer = await createCustomer(harness.prisma, { budgetUsd: 1000, budgetPeriod: 'month' });
  for (let i = 0; i < 5; i++) expect((await complete(customer.key, { url: i % 2 === 0 ? harness.url : second.url })).status).toBe(200);
  const [budget] = (await harness.redis.keys(keyNames(customer.userId, customer.tokenId).budgets)).filter((name) => !name.endsWith(':c'));
  expect(budget).toBeDefined();
  await harness.relay.ledger.flush();
  await second.relay.ledger.flush();
  const charged = (await consumeLogs(harness.prisma)).filter((row) => row.tokenId === customer.tokenId).reduce((sum, row) => sum - Number(row.quota), 0);
  expect(charged).toBeGreaterThan(0);
  await eventually(async () => {
    const mirror = await harness.redis.hgetall(budget!);
    expect({ spent: Number(mirror.spent), held: Number(mirror.held) }).toEqual({ spent: charged, held: 0 });
  }, GIVEN_BACK_MS);
  expect(await harness.redis.zcard(`${budget}:c`)).toBe(0);
});
