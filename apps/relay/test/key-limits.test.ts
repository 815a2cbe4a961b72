// docs/api.md 3.9.3: requests and tokens per minute and requests in flight, per key and per user of
// a group (GroupRateLimit), counted in Redis for every relay: 429 in the client's dialect with
// Retry-After, and OpenAI's x-ratelimit-* headers.
import { metricValue } from '@modelgate/http';
import { createApiKey, createUser, redisPrefix, setOption } from '@modelgate/testing';
import { estimateCompletion } from '../src/dialects/openai/completion-request';
import { consumeLogs, createCustomer, eventually, harness, MODEL, openAiChannel, type RelayHarness, relaySuite, resetSuite, setUnitPrices, startRelay, upstream } from './harness';

relaySuite({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '1500' });

/** A second relay on the same database and Redis prefix: the limits hold across relays. */
let second: RelayHarness;

beforeAll(async () => {
  second = await startRelay({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '1500' });
});

afterAll(async () => {
  await second?.close();
});

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma);
  await openAiChannel(harness.prisma, upstream.url);
  await reloadBoth();
});

async function reloadBoth(): Promise<void> {
  await harness.reloadCaches();
  await second.reloadCaches();
}

interface Ask {
  url?: string;
  maxTokens?: number;
  stream?: boolean;
  signal?: AbortSignal;
}

function complete(key: string, { url = harness.url, maxTokens = 5, stream = false, signal }: Ask = {}): Promise<Response> {
  return fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-request-id': 'req-limits' },
    body: JSON.stringify({ model: MODEL, prompt: 'hello', max_tokens: maxTokens, stream }),
    signal,
  });
}

/** A streamed call whose first chunk arrived (so it is in flight at the relay), and the rest of it. */
async function streaming(key: string, ask: Ask = {}) {
  const response = await complete(key, { ...ask, stream: true });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  await reader.read();
  return {
    response,
    async rest(): Promise<void> {
      while (!(await reader.read()).done);
    },
  };
}

async function messageOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: { message: string } }).error.message;
}

function header(response: Response, name: string): number | null {
  const value = response.headers.get(name);
  return value === null ? null : Number(value);
}

it('admits exactly rpm_limit of 12 parallel calls spread over two relays, with the remaining count on each answer', async () => {
  const customer = await createCustomer(harness.prisma, { rpmLimit: 5 });
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => complete(customer.key, { url: i % 2 === 0 ? harness.url : second.url })));

  const passed = answers.filter((answer) => answer.status === 200);
  const refused = answers.filter((answer) => answer.status === 429);
  expect(passed).toHaveLength(5);
  expect(refused).toHaveLength(7);
  expect(upstream.requests).toHaveLength(5);
  // Each admitted call was counted on its own: the remaining counts are 4, 3, 2, 1, 0 in some order.
  expect(passed.map((answer) => header(answer, 'x-ratelimit-remaining-requests')).sort((x, y) => x! - y!)).toEqual([0, 1, 2, 3, 4]);
  for (const answer of [...passed, ...refused]) expect(header(answer, 'x-ratelimit-limit-requests')).toBe(5);
  for (const answer of refused) {
    expect(header(answer, 'x-ratelimit-remaining-requests')).toBe(0);
    // The window frees when the calls of this second leave it, a minute after they were made.
    expect(header(answer, 'retry-after')).toBeGreaterThanOrEqual(55);
    expect(header(answer, 'retry-after')).toBeLessThanOrEqual(60);
    expect(await answer.json()).toEqual({
      error: { message: 'this API key may make 5 requests per minute (request id: req-limits)', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
    });
  }

  const counted = await Promise.all(
    [harness, second].map(async (relay) => metricValue(await (await fetch(`${relay.url}/metrics`)).text(), 'relay_limit_refusals_total', { kind: 'requests' }) ?? 0),
  );
  expect(counted[0]! + counted[1]!).toBe(7);
});

it("holds nothing of the user's balance for a call a limit refused", async () => {
  // Room for two reservations of these calls; the one refused must leave the second's room.
  const { promptTokens, completionTokens } = estimateCompletion({ model: MODEL, prompt: 'hello', max_tokens: 5 });
  const user = await createUser(harness.prisma, { quota: 2 * (promptTokens + completionTokens) });
  const { key: limited } = await createApiKey(harness.prisma, user.id, { unlimitedQuota: true, rpmLimit: 1 });
  const { key: other } = await createApiKey(harness.prisma, user.id, { unlimitedQuota: true });
  expect((await complete(limited)).status).toBe(200);
  expect((await complete(limited)).status).toBe(429);
  expect((await complete(other)).status).toBe(200);
});

it('answers a key with no limit of its own without headers or any count in Redis', async () => {
  const customer = await createCustomer(harness.prisma);
  const answer = await complete(customer.key);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('x-ratelimit-limit-requests')).toBeNull();
  expect(answer.headers.get('x-ratelimit-limit-tokens')).toBeNull();
  expect(await harness.redis.keys(`${redisPrefix()}lim:*`)).toEqual([]);
});

it('counts a call by its token estimate at the start and by its actual tokens once it is settled', async () => {
  const maxTokens = 200;
  // What one of these calls is estimated at, read off a key with a large limit.
  const probe = await createCustomer(harness.prisma, { tpmLimit: 1_000_000 });
  const probed = await complete(probe.key, { maxTokens });
  const estimate = 1_000_000 - header(probed, 'x-ratelimit-remaining-tokens')!;
  expect(estimate).toBeGreaterThan(maxTokens);

  // Room for one call's estimate, not two; but for one estimate beside a settled call's actual tokens.
  const limit = estimate + Math.floor(estimate / 2);
  const customer = await createCustomer(harness.prisma, { tpmLimit: limit });
  upstream.setMode('slowDrip', { chunks: 5, chunkDelayMs: 150 });
  const first = await streaming(customer.key, { maxTokens });
  expect(header(first.response, 'x-ratelimit-limit-tokens')).toBe(limit);
  expect(header(first.response, 'x-ratelimit-remaining-tokens')).toBe(limit - estimate);
  expect(first.response.headers.get('x-ratelimit-limit-requests')).toBeNull();

  const refused = await complete(customer.key, { maxTokens, url: second.url });
  expect(refused.status).toBe(429);
  expect(header(refused, 'x-ratelimit-remaining-tokens')).toBe(limit - estimate);
  expect(header(refused, 'retry-after')).toBeGreaterThanOrEqual(55);
  expect((await messageOf(refused))).toMatch(new RegExp(`^this API key may use ${limit} tokens per minute; this request is estimated at ${estimate} `));

  await first.rest();
  upstream.setMode('ok');
  const next = await complete(customer.key, { maxTokens, url: second.url });
  expect(next.status).toBe(200);
  await harness.relay.ledger.flush();
  const [firstRow] = (await consumeLogs(harness.prisma)).filter((row) => row.tokenId === customer.tokenId);
  const used = firstRow!.promptTokens + firstRow!.completionTokens;
  expect(used).toBeLessThan(estimate);
  expect(header(next, 'x-ratelimit-remaining-tokens')).toBe(limit - used - estimate);
});

it('refuses a call estimated at more tokens than the key may use in a minute', async () => {
  const customer = await createCustomer(harness.prisma, { tpmLimit: 10 });
  const answer = await complete(customer.key, { maxTokens: 50 });
  expect(answer.status).toBe(429);
  expect(header(answer, 'retry-after')).toBeGreaterThanOrEqual(1);
  expect((await messageOf(answer))).toMatch(/^this request is estimated at \d+ tokens, more than the 10 tokens per minute this API key may use/);
  expect(upstream.requests).toHaveLength(0);
});

describe('max_concurrency 1', () => {
  async function expectBusy(key: string, url = harness.url): Promise<void> {
    const busy = await complete(key, { url });
    expect(busy.status).toBe(429);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect((await messageOf(busy))).toMatch(/^this API key may have 1 concurrent request in flight \(/);
  }

  async function expectFree(key: string): Promise<void> {
    upstream.setMode('ok');
    expect((await complete(key, { url: second.url })).status).toBe(200);
  }

  it('frees the slot when the call succeeds', async () => {
    const customer = await createCustomer(harness.prisma, { maxConcurrency: 1 });
    upstream.setMode('slowDrip', { chunks: 5, chunkDelayMs: 150 });
    const first = await streaming(customer.key);
    await expectBusy(customer.key, second.url);
    await first.rest();
    await expectFree(customer.key);
    // Sequential calls never meet a slot still held by the one before.
    for (let i = 0; i < 5; i++) expect((await complete(customer.key)).status).toBe(200);
  });

  it('frees the slot when the upstream fails, before or after the first byte', async () => {
    const customer = await createCustomer(harness.prisma, { maxConcurrency: 1 });
    upstream.setMode('resetMidStream', { chunks: 5, chunkDelayMs: 300 });
    const first = await streaming(customer.key);
    await expectBusy(customer.key);
    await first.rest();
    await expectFree(customer.key);

    upstream.setMode('error500');
    expect((await complete(customer.key)).status).toBe(502);
    await expectFree(customer.key);
  });

  it('frees the slot when the client leaves', async () => {
    const customer = await createCustomer(harness.prisma, { maxConcurrency: 1 });
    upstream.setMode('slowDrip', { chunks: 20, chunkDelayMs: 150 });
    const controller = new AbortController();
    await streaming(customer.key, { signal: controller.signal });
    await expectBusy(customer.key);
    controller.abort();
    upstream.setMode('ok');
    await eventually(async () => expect((await complete(customer.key)).status).toBe(200));
  });

  it('frees the slot when the upstream times out', async () => {
    const customer = await createCustomer(harness.prisma, { maxConcurrency: 1 });
    upstream.setMode('hangBeforeHeaders');
    const first = complete(customer.key);
    await eventually(() => expect(upstream.requests).toHaveLength(1));
    await expectBusy(customer.key, second.url);
    expect((await first).status).toBe(504);
    await expectFree(customer.key);
  });

  it('stops counting the call of a relay that died once its lease lapses', async () => {
    const customer = await createCustomer(harness.prisma, { maxConcurrency: 1 });
    // A lease as a relay takes it (60 s), and then as it stands once that relay stopped renewing it.
    const leases = `${redisPrefix()}lim:{u${customer.userId}}:k${customer.tokenId}:c`;
    await harness.redis.zadd(leases, Date.now() + 60_000, 'a-relay-that-died');
    await expectBusy(customer.key);
    await harness.redis.zadd(leases, Date.now() - 1, 'a-relay-that-died');
    await expectFree(customer.key);
  });
});

describe('GroupRateLimit', () => {
  beforeEach(async () => {
    await setOption(harness.prisma, 'GroupRateLimit', { default: { rpm: 3, tpm: 0, concurrency: 0 }, vip: { rpm: 0, tpm: 0, concurrency: 1 } });
    await reloadBoth();
  });

  it("counts each user's keys of the group together, and answers with the tighter of the key's and the group's limits", async () => {
    const user = await createUser(harness.prisma, { quota: 1_000_000 });
    const { key: first } = await createApiKey(harness.prisma, user.id, { unlimitedQuota: true, rpmLimit: 2 });
    const { key: other } = await createApiKey(harness.prisma, user.id, { unlimitedQuota: true });

    const a = await complete(first);
    expect([a.status, header(a, 'x-ratelimit-limit-requests'), header(a, 'x-ratelimit-remaining-requests')]).toEqual([200, 2, 1]);
    const b = await complete(first, { url: second.url });
    expect([b.status, header(b, 'x-ratelimit-limit-requests'), header(b, 'x-ratelimit-remaining-requests')]).toEqual([200, 2, 0]);
    // Refused by the key's own limit: it counts nowhere, the group's third call is still free.
    const c = await complete(first);
    expect(c.status).toBe(429);
    expect((await messageOf(c))).toMatch(/^this API key may make 2 requests per minute/);
    expect((await complete(other)).status).toBe(200);

    const d = await complete(other, { url: second.url });
    expect(d.status).toBe(429);
    expect([header(d, 'x-ratelimit-limit-requests'), header(d, 'x-ratelimit-remaining-requests')]).toEqual([3, 0]);
    expect((await messageOf(d))).toMatch(/^each user of group "default" may make 3 requests per minute/);

    // Every user of the group has a limit of its own.
    const neighbour = await createCustomer(harness.prisma);
    expect((await complete(neighbour.key)).status).toBe(200);
  });

  it("holds a group's concurrency per user, whichever of the user's keys calls", async () => {
    await openAiChannel(harness.prisma, upstream.url, { groups: 'vip' });
    await reloadBoth();
    const user = await createUser(harness.prisma, { quota: 1_000_000, group: 'vip' });
    const { key: first } = await createApiKey(harness.prisma, user.id, { unlimitedQuota: true });
    const { key: other } = await createApiKey(harness.prisma, user.id, { unlimitedQuota: true });
    upstream.setMode('slowDrip', { chunks: 5, chunkDelayMs: 150 });
    const inFlight = await streaming(first);
    const busy = await complete(other, { url: second.url });
    expect(busy.status).toBe(429);
    expect((await messageOf(busy))).toMatch(/^each user of group "vip" may have 1 concurrent request in flight/);
    await inFlight.rest();
    upstream.setMode('ok');
    expect((await complete(other)).status).toBe(200);
  });
});

describe("a limit's 429 in each client's dialect", () => {
  it('answers OpenAI, Anthropic and Gemini clients in their shapes, with Retry-After and the x-ratelimit headers', async () => {
    const customer = await createCustomer(harness.prisma, { rpmLimit: 1 });
    expect((await complete(customer.key)).status).toBe(200);
    const message = 'this API key may make 1 request per minute';

    const chat = await fetch(`${harness.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${customer.key}`, 'x-request-id': 'req-chat' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const messages = await fetch(`${harness.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': customer.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const gemini = await fetch(`${harness.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': customer.key },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
    });
    for (const answer of [chat, messages, gemini]) {
      expect(answer.status).toBe(429);
      expect(header(answer, 'retry-after')).toBeGreaterThanOrEqual(1);
      expect([header(answer, 'x-ratelimit-limit-requests'), header(answer, 'x-ratelimit-remaining-requests')]).toEqual([1, 0]);
    }
    expect(await chat.json()).toEqual({ error: { message: `${message} (request id: req-chat)`, type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } });
    expect(await messages.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message } });
    expect(await gemini.json()).toEqual({ error: { code: 429, message, status: 'RESOURCE_EXHAUSTED' } });
    expect(upstream.requests).toHaveLength(1);
  });
});
