// A user's call through the relay as the console shows it: the row on the Usage page (filters kept
// in the address bar, CSV export), and the day's request and spend in the dashboard's charts; then
// image, speech, transcription and rerank calls, with what each one billed.
import { readFile } from 'node:fs/promises';
import type { ApiClient } from '@modelgate/client';
import { silentWav } from '@modelgate/testing/fake-upstream';
import OpenAI, { toFile } from 'openai';
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
/** The OpenAI SDK with alice's key, through the edge. */
let openai: OpenAI;
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
  await stack.createChannel({ name: 'fake OpenAI media', type: 1, key: 'sk-fake-upstream', base_url: stack.upstream.url, models: MEDIA_MODELS.join(',') });
  // Model ratio 10: USD 20 per 1M tokens, so the call's cost is well above a rounding cent.
  await stack.setOption('ModelRatio', JSON.stringify({ [MODEL]: 10 }));
  await stack.api.call('post /api/user', { body: { ...USER, quota: 10 * QUOTA_PER_UNIT } });
  alice = await signedInClient(stack.baseUrl, USER.username, USER.password);
  const key = await alice.call('post /api/token', { body: { name: KEY_NAME } });

  openai = new OpenAI({ apiKey: key.key, baseURL: `${stack.baseUrl}/v1` });
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

/**
 * Media calls through the relay to the fake upstream (docs/api.md 2.13), each priced per unit at
 * the shipped ModelPrice (2.14; ModelRatio prices only the chat model here), and what the Usage page
 * and the CSV export say each one billed.
 */
const MEDIA_MODELS = ['dall-e-3', 'tts-1', 'whisper-1', 'rerank-v3.5'];
const SPOKEN = 'Hello from the console';
const MEDIA_BILLED: Record<string, { billed: string; content: string; csv: string }> = {
  'dall-e-3': { billed: '2 images × USD 0.04 per image', content: '2 x USD 0.04 per image, group ratio 1', csv: ',2,,,,2,image,0.04' },
  'tts-1': {
    billed: `${SPOKEN.length} characters × USD 0.015 per 1,000 characters`,
    content: `${SPOKEN.length / 1000} x USD 0.015 per 1,000 characters, group ratio 1`,
    csv: `,,${SPOKEN.length},,,${SPOKEN.length / 1000},1k_characters,0.015`,
  },
  'whisper-1': { billed: '61 s × USD 0.006 per minute', content: '1.016667 x USD 0.006 per minute, group ratio 1', csv: ',,,61,,1.016667,minute,0.006' },
  'rerank-v3.5': { billed: '1 request × USD 0.002 per request', content: '1 x USD 0.002 per request, group ratio 1', csv: ',,,,1,1,request,0.002' },
};

/** 8 kHz 8-bit mono: a minute of audio stays small. */
const TEST_PCM = { sampleRate: 8_000, bitsPerSample: 8 } as const;

/** Polls until the relay's ledger writer has booked `count` consume rows of the caller. */
async function bookedCalls(api: ApiClient, count: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if ((await api.call('get /api/log/self', { query: { type: 2 } })).total >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${count} calls were not booked within 10 s`);
}

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

test('media calls say what was billed, on the page and in the CSV', async () => {
  const images = await openai.images.generate({ model: 'dall-e-3', prompt: 'A lighthouse at dawn', n: 2, response_format: 'b64_json' });
  expect(images.data).toHaveLength(2);
  const speech = await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: SPOKEN });
  expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0);
  const transcription = await openai.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(silentWav(61, TEST_PCM), 'speech.wav', { type: 'audio/wav' }) });
  expect(typeof transcription.text).toBe('string');
  const rerank = await fetch(`${stack.baseUrl}/v1/rerank`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${openai.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'rerank-v3.5', query: 'lighthouse', documents: ['a lighthouse at dawn', 'a harbour'] }),
  });
  expect(rerank.status).toBe(200);
  await bookedCalls(alice, 1 + MEDIA_MODELS.length);

  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.goto('/usage');
  for (const [model, { billed, content }] of Object.entries(MEDIA_BILLED)) {
    const details = page.getByRole('row').filter({ hasText: model }).getByRole('cell').last();
    await expect(details.innerText()).resolves.toBe(`${billed}\n${content}`);
  }
  // A chat call's row has nothing of the kind.
  await expect(logRow(page).getByRole('cell').last().innerText()).resolves.toMatch(/^model ratio 10,/);
  // The details are the table's last column: scrolled into view for the picture.
  await page.locator('main .table-wrap').evaluate((table) => table.scrollTo({ left: table.scrollWidth }));
  await browser.screenshot(page, 'usage-media');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  const [header, ...lines] = (await readFile(await download.path(), 'utf8')).trim().split('\r\n');
  expect(header).toMatch(/,request_id,images,characters,seconds,requests,units,unit,usd_per_unit$/);
  for (const [model, { csv }] of Object.entries(MEDIA_BILLED)) {
    expect(lines.find((line) => line.includes(`,${model},`))?.endsWith(csv)).toBe(true);
  }
  expect(lines.find((line) => line.includes(MODEL))).toMatch(/,,,,,,,$/);
  await page.context().close();

  const phone = await browser.newPage('phone');
  await browser.signIn(phone, stack, USER.username, USER.password);
  await phone.goto('/usage');
  await phone.getByRole('row').filter({ hasText: 'dall-e-3' }).waitFor();
  await phone.locator('main .table-wrap').evaluate((table) => table.scrollTo({ left: table.scrollWidth }));
  await browser.screenshot(phone, 'usage-media');
  await phone.context().close();
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
