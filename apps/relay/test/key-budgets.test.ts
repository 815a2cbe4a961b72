// docs/api.md 3.9.4: a key's budget per UTC day, week or month. Each call's reservation is held
// against it in Redis for every relay, the actual charge replaces the hold; past the budget calls
// get 403 budget_exceeded until the next period, which starts from 0.
import { metricValue } from '@modelgate/http';
import { redisPrefix, setOption } from '@modelgate/testing';
import { estimateCompletion } from '../src/dialects/openai/completion-request';
import { consumeLogs, createCustomer, eventually, harness, MODEL, openAiChannel, type RelayHarness, relaySuite, resetSuite, setUnitPrices, startRelay, upstream } from './harness';

relaySuite();

/** A second relay on the same database and Redis prefix: the budget holds across relays. */
let second: RelayHarness;

/** Quota per USD here: budgets in USD with 4 decimals then name any quota to a tenth. */
const QUOTA_PER_UNIT = 1000;
const PROMPT = 'hello';
const MAX_TOKENS = 5;
/** What each call reserves: at unit prices, its estimated tokens. */
const { promptTokens, completionTokens } = estimateCompletion({ model: MODEL, prompt: PROMPT, max_tokens: MAX_TOKENS });
const RESERVED = promptTokens + completionTokens;

const DAY_MS = 86_400_000;

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

function complete(key: string, url = harness.url): Promise<Response> {
  return fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-request-id': 'req-budget' },
    body: JSON.stringify({ model: MODEL, prompt: PROMPT, max_tokens: MAX_TOKENS }),
  });
}

function usd(quota: number): number {
  return quota / QUOTA_PER_UNIT;
}

function startOfDay(now = Date.now()): number {
  return now - (now % DAY_MS);
}

function startOfMonth(now = Date.now()): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** What the ledger charged the key, once every settled call is written. */
async function chargedTo(tokenId: number): Promise<{ calls: number; quota: number }> {
  await harness.relay.ledger.flush();
  await second.relay.ledger.flush();
  const rows = (await consumeLogs(harness.prisma)).filter((row) => row.tokenId === tokenId);
  return { calls: rows.length, quota: rows.reduce((sum, row) => sum - Number(row.quota), 0) };
}

it('admits exactly what the budget holds of 10 parallel calls over two relays, then refuses until the period ends', async () => {
  // Three reservations fit, a fourth does not; once the calls settle below their reservations, more.
  const budget = 4 * RESERVED - 1;
  const customer = await createCustomer(harness.prisma, { budgetUsd: usd(budget), budgetPeriod: 'month' });
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => complete(customer.key, i % 2 === 0 ? harness.url : second.url)));
  expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
  const refused = answers.filter((answer) => answer.status === 403);
  expect(refused).toHaveLength(7);
  expect(upstream.requests).toHaveLength(3);
  const renews = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString();
  const limit = `USD ${usd(budget)} a month`;
  for (const answer of refused) {
    expect(await answer.json()).toEqual({
      error: {
        // Used up by the calls holding it, or by them and the charges of those already settled.
        message: expect.stringMatching(
          new RegExp(
            `^(this API key's budget \\(${limit}\\) is used up|this request's estimated cost \\(${RESERVED}\\) is more than what is left of this API key's budget \\(${limit}\\): \\d+) until ${renews} \\(request id: req-budget\\)$`,
          ),
        ),
        type: 'insufficient_quota',
        param: null,
        code: 'budget_exceeded',
      },
    });
  }

  // The actual charges replaced the holds: calls go on while what is left holds a reservation.
  const { quota: burst } = await chargedTo(customer.tokenId);
  const each = burst / 3;
  let spent = burst;
  let more = 0;
  while (spent + RESERVED <= budget) {
    expect((await complete(customer.key, more % 2 === 0 ? second.url : harness.url)).status).toBe(200);
    spent += each;
    more += 1;
  }
  const past = await complete(customer.key);
  expect(past.status).toBe(403);

  const charged = await chargedTo(customer.tokenId);
  expect(charged).toEqual({ calls: 3 + more, quota: spent });
  const token = await harness.prisma.token.findUniqueOrThrow({ where: { id: customer.tokenId } });
  expect(token.budgetUsedQuota).toBe(BigInt(spent));
  expect(token.budgetPeriodStart?.getTime()).toBe(startOfMonth());

  const metrics = await Promise.all([harness, second].map(async (relay) => metricValue(await (await fetch(`${relay.url}/metrics`)).text(), 'relay_limit_refusals_total', { kind: 'budget' }) ?? 0));
  expect(metrics[0]! + metrics[1]!).toBe(8);
});

it('says the budget is used up, in the Anthropic shape too, once the charges reached it', async () => {
  const customer = await createCustomer(harness.prisma, { budgetUsd: usd(RESERVED), budgetPeriod: 'day' });
  expect((await complete(customer.key)).status).toBe(200);
  const { quota } = await chargedTo(customer.tokenId);
  // At unit prices the fake upstream's count of the prompt may be below the estimate: top the spend up.
  if (quota < RESERVED) await harness.prisma.token.update({ where: { id: customer.tokenId }, data: { budgetUsd: usd(quota) } });
  await harness.relay.cacheSync.refreshAll();
  const renews = new Date(startOfDay() + DAY_MS).toISOString();

  const answer = await fetch(`${harness.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': customer.key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'hello' }] }),
  });
  expect(answer.status).toBe(403);
  expect(await answer.json()).toEqual({
    type: 'error',
    error: { type: 'permission_error', message: expect.stringMatching(new RegExp(`^this API key's budget \\(USD [0-9.]+ a day\\) is used up until ${renews}$`)) },
  });
  expect(upstream.requests).toHaveLength(1);
});

it("starts a new period from 0, and goes on from the ledger's count within the current one", async () => {
  const budgetUsd = usd(2 * RESERVED);
  const fields = (period: 'day' | 'week' | 'month', start: number, used: number) => ({
    budgetUsd,
    budgetPeriod: period,
    budgetPeriodStart: new Date(start),
    budgetUsedQuota: BigInt(used),
  });
  const today = startOfDay();
  const monday = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS;
  const lastMonth = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1);

  // Spent in full, but in the period before: each starts again from 0.
  const yesterdays = await createCustomer(harness.prisma, fields('day', today - DAY_MS, 10 * RESERVED));
  const lastWeeks = await createCustomer(harness.prisma, fields('week', monday - 7 * DAY_MS, 10 * RESERVED));
  const lastMonths = await createCustomer(harness.prisma, fields('month', lastMonth, 10 * RESERVED));
  // Spent in full in the current period: refused from the first call.
  const todays = await createCustomer(harness.prisma, fields('day', today, 2 * RESERVED));
  const thisWeeks = await createCustomer(harness.prisma, fields('week', monday, 2 * RESERVED));

  for (const customer of [yesterdays, lastWeeks, lastMonths]) expect((await complete(customer.key)).status).toBe(200);
  for (const customer of [todays, thisWeeks]) {
    const answer = await complete(customer.key, second.url);
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('budget_exceeded');
  }
  expect(upstream.requests).toHaveLength(3);

  for (const [customer, start] of [[yesterdays, today], [lastWeeks, monday], [lastMonths, startOfMonth()]] as const) {
    const { quota } = await chargedTo(customer.tokenId);
    const token = await harness.prisma.token.findUniqueOrThrow({ where: { id: customer.tokenId } });
    expect(token.budgetUsedQuota).toBe(BigInt(quota));
    expect(token.budgetPeriodStart?.getTime()).toBe(start);
  }
});

it('gives back the hold of a call whose relay died once its lease lapses', async () => {
  const customer = await createCustomer(harness.prisma, { budgetUsd: usd(2 * RESERVED), budgetPeriod: 'month' });
  expect((await complete(customer.key)).status).toBe(200);
  // What is left holds one more call, not two. A hold as a relay takes it (a 60 s lease), and then
  // as it stands once that relay stopped renewing it.
  const budget = `${redisPrefix()}lim:{u${customer.userId}}:k${customer.tokenId}:b:month:${startOfMonth() / 1000}`;
  const held = `a-relay-that-died:${RESERVED}`;
  await harness.redis.hincrby(budget, 'held', RESERVED);
  await harness.redis.zadd(`${budget}:c`, Date.now() + 60_000, held);
  expect((await complete(customer.key)).status).toBe(403);
  await harness.redis.zadd(`${budget}:c`, Date.now() - 1, held);
  // Lapsed holds are looked for once a second.
  await eventually(async () => expect((await complete(customer.key)).status).toBe(200));
});

it('holds nothing and counts nothing in Redis for a key without a budget', async () => {
  const customer = await createCustomer(harness.prisma);
  for (let i = 0; i < 3; i++) expect((await complete(customer.key)).status).toBe(200);
  expect(await harness.redis.keys(`${redisPrefix()}lim:*`)).toEqual([]);
  const { quota } = await chargedTo(customer.tokenId);
  const token = await harness.prisma.token.findUniqueOrThrow({ where: { id: customer.tokenId } });
  // The ledger still counts the period's spend: a budget set later starts from it.
  expect(token.budgetUsedQuota).toBe(BigInt(quota));
});
