// docs/api.md 1.3, "key's rate limit hit": RELAY_KEY_RATE_LIMIT_PER_MINUTE, the requests per minute
// of keys without their own rpm_limit, counted per key in Redis.
import { createChannel } from '@modelgate/testing';
import { createCustomer, harness, MODEL, openAiChannel, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';

relaySuite({ RELAY_KEY_RATE_LIMIT_PER_MINUTE: '3' });

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma, [MODEL, 'gemini-2.5-flash']);
  await openAiChannel(harness.prisma, upstream.url);
  await createChannel(harness.prisma, { type: 24, baseUrl: upstream.url, models: 'gemini-2.5-flash', key: 'gemini-channel-key' });
  await harness.reloadCaches();
});

function complete(key: string): Promise<Response> {
  return fetch(`${harness.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-request-id': 'req-rate-1' },
    body: JSON.stringify({ model: MODEL, prompt: 'hello', max_tokens: 5 }),
  });
}

function generate(key: string): Promise<Response> {
  return fetch(`${harness.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
  });
}

it('answers 429 rate_limit_exceeded with Retry-After once a key made its requests of the minute, in both dialects', async () => {
  const customer = await createCustomer(harness.prisma);
  for (let i = 0; i < 3; i++) expect((await complete(customer.key)).status).toBe(200);

  const limited = await complete(customer.key);
  expect(limited.status).toBe(429);
  const retryAfter = Number(limited.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(await limited.json()).toEqual({
    error: { message: expect.stringMatching(/ \(request id: req-rate-1\)$/), type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
  });

  const google = await generate(customer.key);
  expect(google.status).toBe(429);
  expect(google.headers.get('retry-after')).not.toBeNull();
  expect(await google.json()).toEqual({ error: { code: 429, message: expect.any(String), status: 'RESOURCE_EXHAUSTED' } });

  // The refused calls never reached the upstream; other keys are unaffected.
  expect(upstream.requests).toHaveLength(3);
  const other = await createCustomer(harness.prisma);
  expect((await complete(other.key)).status).toBe(200);
});

it('counts a key with its own rpm_limit by that limit instead of the default', async () => {
  const customer = await createCustomer(harness.prisma, { rpmLimit: 5 });
  const answers = [];
  for (let i = 0; i < 6; i++) answers.push(await complete(customer.key));
  expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429]);
  expect(answers.map((answer) => answer.headers.get('x-ratelimit-remaining-requests'))).toEqual(['4', '3', '2', '1', '0', '0']);
  expect(answers[5]!.headers.get('x-ratelimit-limit-requests')).toBe('5');
});
