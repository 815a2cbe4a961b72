// A user's call through the relay as the console shows it: the row on the Usage page (filters kept
// in the address bar, CSV export), and the day's request and spend in the dashboard's charts.
import { readFile } from 'node:fs/promises';
import type { ApiClient } from '@modelgate/client';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { formatInteger, formatQuotaAsUsd } from '../../web/src/lib/money';
import { dayLabel } from '../../web/src/pages/dashboard/usage-series';
import { formatSignedQuota } from '../../web/src/pages/usage/log-filters';
import { openBrowser, type ConsoleBrowser } from './support/browser';
import { signedInClient, type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(90_000);

const MODEL = 'console-usage-model';
const USER = { username: 'usage_alice', password: 'usage-alice-password' };
const KEY_NAME = 'usage e2e key';
const QUOTA_PER_UNIT = 500_000;

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let alice: ApiClient;
/** The consume row of the one call made. */
let call: { quota: number; promptTokens: number; completionTokens: number };

/** Polls until the relay's ledger writer has booked the call (it flushes every 200 ms here). */
async function bookedCall(api: ApiClient) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const page = await api.call('get /api/log/self', { query: { type: 2 } });
    const row = page.items[0];
    if (row) return { quota: row.quota, promptTokens: row.prompt_tokens, completionTokens: row.completion_tokens };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the call was not booked within 10 s');
}

beforeAll(async () => {
  stack = await startConsoleStack();
  await stack.createChannel({ name: 'fake OpenAI', type: 1, key: 'sk-fake-upstream', base_url: stack.upstream.url, models: MODEL });
  // Model ratio 10: USD 20 per 1M tokens, so the call's cost is well above a rounding cent.
  await stack.setOption('ModelRatio', JSON.stringify({ [MODEL]: 10 }));
  await stack.api.call('post /api/user', { body: { ...USER, quota: 10 * QUOTA_PER_UNIT } });
  alice = await signedInClient(stack.baseUrl, USER.username, USER.password);
  const key = await alice.call('post /api/token', { body: { name: KEY_NAME } });

  const openai = new OpenAI({ apiKey: key.key, baseURL: `${stack.baseUrl}/v1` });
  const completion = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Say hello to the console' }] });
  expect(completion.choices[0]?.message.content).toBeTruthy();
  call = await bookedCall(alice);
  expect(call.quota).toBeLessThan(0);
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

function logRow(page: Page) {
  return page.getByRole('row').filter({ hasText: MODEL });
}

test('the Usage page lists the call, keeps its filters across a reload, and exports it as CSV', async () => {
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { name: 'Usage' }).waitFor();

  const row = logRow(page);
  await row.waitFor();
  const cells = await row.getByRole('cell').allInnerTexts();
  expect(cells).toEqual(expect.arrayContaining([
    'Consume',
    MODEL,
    KEY_NAME,
    formatInteger(call.promptTokens),
    formatInteger(call.completionTokens),
    formatSignedQuota(call.quota, QUOTA_PER_UNIT),
    'No',
  ]));
  await browser.screenshot(page, 'usage');

  // Filters go to the address bar, so a reload shows the same rows.
  await page.getByLabel('Type').selectOption({ label: 'Consume' });
  await page.getByLabel('Model').fill(MODEL);
  await page.getByLabel('Key', { exact: true }).fill(KEY_NAME);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL((url) => url.searchParams.get('type') === '2' && url.searchParams.get('model') === MODEL && url.searchParams.get('key') === KEY_NAME);
  await page.reload();
  await expect(page.getByLabel('Model').inputValue()).resolves.toBe(MODEL);
  await expect(page.getByLabel('Key', { exact: true }).inputValue()).resolves.toBe(KEY_NAME);
  await expect(page.getByLabel('Type').inputValue()).resolves.toBe('2');
  await logRow(page).waitFor();
  await page.getByRole('status').filter({ hasText: /^1 log row$/ }).waitFor();

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^modelgate-usage-\d{8}T\d{6}Z\.csv$/);
  const csv = await readFile(await download.path(), 'utf8');
  const [header, ...lines] = csv.trim().split('\r\n');
  expect(header).toContain('model_name');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(MODEL);
  expect(lines[0]).toContain(KEY_NAME);
  expect(lines[0]).toContain(String(call.quota));

  // Another key, or a model without calls: no rows; the time range filters too.
  await page.getByLabel('Key', { exact: true }).fill('another key');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('status').filter({ hasText: /^0 log rows$/ }).waitFor();
  await page.getByLabel('Key', { exact: true }).fill(KEY_NAME);
  await page.getByLabel('Model').fill('no-such-model');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('status').filter({ hasText: /^0 log rows$/ }).waitFor();
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.waitForURL((url) => url.search === '');
  await page.getByLabel('From', { exact: true }).fill('2001-01-01T00:00');
  await page.getByLabel('To', { exact: true }).fill('2001-01-02T00:00');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('status').filter({ hasText: /^0 log rows$/ }).waitFor();
  await page.context().close();
});

test("the dashboard's charts show the day's request and spend", async () => {
  const page = await browser.newPage('desktop');
  // Recharts skips its grow-in animation then, so the screenshot shows the bars at full height.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await browser.signIn(page, stack, USER.username, USER.password);
  const today = dayLabel(Math.floor(Date.now() / 1000 / 86_400) * 86_400);
  const spend = formatQuotaAsUsd(-call.quota, QUOTA_PER_UNIT);

  const requests = page.getByRole('figure', { name: 'Requests per day' });
  const todayRequests = requests.getByRole('row').filter({ has: page.getByRole('rowheader', { name: today, exact: true }) });
  await todayRequests.waitFor();
  await expect(todayRequests.getByRole('cell').allInnerTexts()).resolves.toEqual(['1']);
  await expect(requests.getByRole('row').count()).resolves.toBe(1 + 7); // the header and the days

  const spendFigure = page.getByRole('figure', { name: 'Spend per day' });
  const todaySpend = spendFigure.getByRole('row').filter({ has: page.getByRole('rowheader', { name: today, exact: true }) });
  await expect(todaySpend.getByRole('cell').allInnerTexts()).resolves.toEqual([spend, '1']);
  await expect(spendFigure.locator('figcaption').innerText()).resolves.toBe(`${spend} spent in the last 7 days, the most on ${today} (${spend}).`);

  const byModel = page.getByRole('figure', { name: 'Spend by model' });
  await expect(byModel.getByRole('columnheader', { name: `${MODEL} (USD)` }).count()).resolves.toBe(1);
  await expect(page.getByRole('region', { name: 'Usage by model' }).getByRole('row').filter({ hasText: MODEL }).count()).resolves.toBe(1);
  // Recharts draws once it has measured its box: wait for the bars before the picture.
  await page.locator('.recharts-bar-rectangle').first().waitFor();
  // The pointer rests where Sign in was, over a chart: move it away so no tooltip is in the picture.
  await page.mouse.move(0, 0);
  await browser.screenshot(page, 'dashboard');

  await page.getByRole('button', { name: 'Last 30 days' }).click();
  await page.waitForURL((url) => url.searchParams.get('range') === '30');
  await page.getByRole('button', { name: 'Last 30 days', pressed: true }).waitFor();
  await expect(page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed')).resolves.toBe('false');
  await requests.getByRole('row').nth(30).waitFor();
  await expect(requests.getByRole('row').count()).resolves.toBe(1 + 30);
  await page.context().close();
});

test('a new user sees the first steps instead of empty charts', async () => {
  await stack.api.call('post /api/user', { body: { username: 'usage_newbie', password: 'usage-newbie-password' } });
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, 'usage_newbie', 'usage-newbie-password');
  const firstSteps = page.getByRole('region', { name: 'No usage yet' });
  await firstSteps.waitFor();
  await expect(firstSteps.getByRole('link', { name: 'Create an API key' }).getAttribute('href')).resolves.toBe('/keys');
  await expect(firstSteps.getByRole('link', { name: 'Quick start' }).getAttribute('href')).resolves.toBe('/quick-start');
  await expect(page.getByRole('figure').count()).resolves.toBe(0);
  await page.context().close();
});

test('dashboard and usage at phone width', async () => {
  const page = await browser.newPage('phone');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.locator('.recharts-bar-rectangle').first().waitFor();
  await page.mouse.move(0, 0);
  await browser.screenshot(page, 'dashboard');
  await page.goto('/usage');
  await logRow(page).waitFor();
  await browser.screenshot(page, 'usage');
  await page.context().close();
});
