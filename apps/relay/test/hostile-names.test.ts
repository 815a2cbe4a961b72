// Client names the relay must neither store nor look up as inherited object members:
// NUL characters in the model (PostgreSQL text refuses them, so a consume row would never be written)
// and models or groups named after Object.prototype members (a price lookup used to read a function).
import { createChannel, setOption } from '@modelgate/testing';
import { consumeLogs, createCustomer, harness, MODEL, openAiChannel, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';

relaySuite();

beforeEach(async () => {
  await resetSuite({ chunks: 1 });
  await setUnitPrices(harness.prisma);
  await openAiChannel(harness.prisma, upstream.url);
  await harness.reloadCaches();
});

interface Answer {
  status: number;
  error: { message: string; type?: string; param?: string | null; code: string | number; status?: string };
}

async function complete(key: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${harness.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, error: ((await response.json()) as { error: Answer['error'] }).error };
}

async function generate(key: string, model: string): Promise<Answer> {
  const response = await fetch(`${harness.url}/v1beta/models/${encodeURIComponent(model)}:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
  });
  return { status: response.status, error: ((await response.json()) as { error: Answer['error'] }).error };
}

/** Nothing reached a provider and nothing was charged. */
async function expectNothingRelayed(userId: number): Promise<void> {
  expect(upstream.requests).toHaveLength(0);
  await harness.relay.ledger.flush();
  expect(await consumeLogs(harness.prisma)).toHaveLength(0);
  expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } })).usedQuota).toBe(0n);
}

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'];

describe('NUL in the model', () => {
  it('is a 400 invalid_request naming `model` in the OpenAI dialect, before any routing', async () => {
    const customer = await createCustomer(harness.prisma);
    const answer = await complete(customer.key, { model: `${MODEL}\u0000`, prompt: 'hello', max_tokens: 5 });
    expect(answer.status).toBe(400);
    expect(answer.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'model' });
    expect(answer.error.message).toMatch(/^model: /);
    await expectNothingRelayed(customer.userId);
  });

  it('is a 400 INVALID_ARGUMENT in the Google dialect when the path names the model', async () => {
    await createChannel(harness.prisma, { type: 24, baseUrl: upstream.url, models: 'gemini-2.5-flash', key: 'gemini-channel-key' });
    await setUnitPrices(harness.prisma, [MODEL, 'gemini-2.5-flash']);
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma);
    const answer = await generate(customer.key, 'gemini-2.5-flash\u0000');
    expect(answer).toMatchObject({ status: 400, error: { code: 400, status: 'INVALID_ARGUMENT' } });
    expect(answer.error.message).toMatch(/^model: /);
    await expectNothingRelayed(customer.userId);
  });

  it('is allowed in the prompt, which is forwarded and never stored', async () => {
    const customer = await createCustomer(harness.prisma);
    const answer = await complete(customer.key, { model: MODEL, prompt: 'a\u0000b', max_tokens: 5 });
    expect(answer.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('models and groups named after Object.prototype members', () => {
  it.each(PROTOTYPE_NAMES)('model %j that no channel serves is a 404 model_not_found', async (name) => {
    const customer = await createCustomer(harness.prisma);
    const answer = await complete(customer.key, { model: name, prompt: 'hello', max_tokens: 5 });
    expect(answer.status).toBe(404);
    expect(answer.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found' });
    await expectNothingRelayed(customer.userId);
  });

  it.each(PROTOTYPE_NAMES)('model %j served by a channel but never priced is a 400 model_price_error, not a NaN charge', async (name) => {
    // Written behind the account service's validation, as an old or hand-edited database may hold it.
    await openAiChannel(harness.prisma, upstream.url, { models: name });
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma);
    const answer = await complete(customer.key, { model: name, prompt: 'hello', max_tokens: 5 });
    expect(answer.status).toBe(400);
    expect(answer.error).toMatchObject({ type: 'invalid_request_error', code: 'model_price_error' });
    await expectNothingRelayed(customer.userId);
  });

  it.each(PROTOTYPE_NAMES)('group %j without a GroupRatio is charged at ratio 1', async (group) => {
    await openAiChannel(harness.prisma, upstream.url, { groups: group });
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma, { group });
    const answer = await complete(customer.key, { model: MODEL, prompt: [1, 2, 3], max_tokens: 5 });
    expect(answer.status).toBe(200);
    await harness.relay.ledger.flush();
    const [row] = await consumeLogs(harness.prisma);
    if (!row) throw new Error('no consume row');
    // Unit prices: one quota per prompt and per completion token, times the group's ratio 1.
    expect(row.quota).toBe(-BigInt(row.promptTokens + row.completionTokens));
    expect(row.quota).not.toBe(0n);
  });

  it('keeps the other prices of a stored ratio map that holds such a name', async () => {
    await setOption(harness.prisma, 'ModelRatio', { constructor: 3, [MODEL]: 2 });
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma);
    expect((await complete(customer.key, { model: MODEL, prompt: [1, 2, 3], max_tokens: 5 })).status).toBe(200);
    await harness.relay.ledger.flush();
    const [row] = await consumeLogs(harness.prisma);
    if (!row) throw new Error('no consume row');
    expect(row.quota).toBe(-2n * BigInt(row.promptTokens + row.completionTokens));
  });
});
