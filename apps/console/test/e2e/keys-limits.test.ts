// Rate limits and budgets of API keys in the console (docs/api.md 3.9.3, 3.9.4): set in the key form
// and listed with the budget's use; an admin limiting a user's key from the Users page, and the
// owner then only lowering them; the keys, users and usage tables as one block per row on a phone.
import type { ApiClient } from '@modelgate/client';
import OpenAI from 'openai';
import type { Locator, Page } from 'playwright-core';
import { type ConsoleBrowser, openBrowser } from './support/browser';
import { type ConsoleStack, signedInClient, startConsoleStack } from './support/stack';

jest.setTimeout(90_000);

const MODEL = 'limits-e2e-model';
const QUOTA_PER_UNIT = 500_000;
const ALICE = { username: 'limits_alice', password: 'limits-alice-password' };
const ALICE_KEY = 'alice-ci';

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let alice: ApiClient;
let aliceKeyId: number;

/** "USD 0.0123 of 5.00 this month", as the key list words a budget's use. */
const budgetText = (usedQuota: number, budget: string, period: string) =>
  `USD ${(usedQuota / QUOTA_PER_UNIT).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 })} of ${budget} ${period}`;

beforeAll(async () => {
  stack = await startConsoleStack();
  await stack.createChannel({ name: 'fake OpenAI', type: 1, key: 'sk-fake-upstream', base_url: stack.upstream.url, models: MODEL });
  // Model ratio 10: USD 20 per 1M tokens, so one call's cost shows in the budget's figures.
  await stack.setOption('ModelRatio', JSON.stringify({ [MODEL]: 10 }));
  await stack.api.call('post /api/user', { body: { ...ALICE, quota: 10 * QUOTA_PER_UNIT } });
  alice = await signedInClient(stack.baseUrl, ALICE.username, ALICE.password);
  const key = await alice.call('post /api/token', { body: { name: ALICE_KEY } });
  aliceKeyId = key.id;
  const openai = new OpenAI({ apiKey: key.key, baseURL: `${stack.baseUrl}/v1`, maxRetries: 0 });
  await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Count this against my budget' }] });
  browser = await openBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The key once the ledger has booked its charge (and its budget period). */
async function chargedKey(tokenId: number) {
  for (let tries = 0; ; tries++) {
    const token = await stack.prisma.token.findUniqueOrThrow({ where: { id: tokenId } });
    if (token.budgetUsedQuota > 0n || tries > 40) return token;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function openFromMenu(page: Page, link: string, heading: string) {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

/** The row of `name` in the page's tables, or in `scope`'s. */
function keyRow(page: Page, name: string, scope: Page | Locator = page) {
  return scope.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
}

/** The table shows one labelled block per row, within the phone's width (no sideways scrolling). */
async function expectStackedRows(table: Locator) {
  const layout = await table.evaluate((element) => {
    const view = element.ownerDocument.defaultView;
    const wrap = element.parentElement;
    const row = element.querySelector('tbody tr');
    if (!view || !wrap || !row) return undefined;
    const page = element.ownerDocument.documentElement;
    return {
      head: view.getComputedStyle(element.querySelector('thead') ?? element).display,
      row: view.getComputedStyle(row).display,
      labelled: row.querySelectorAll('td[data-label]').length > 0,
      overflows: wrap.scrollWidth > wrap.clientWidth + 1 || page.scrollWidth > view.innerWidth + 1,
    };
  });
  expect(layout).toEqual({ head: 'none', row: 'grid', labelled: true, overflows: false });
}

test('root sets rate limits and a budget on a new key, sees them listed, and changes them', async () => {
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await openFromMenu(page, 'API keys', 'API keys');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByLabel('Name', { exact: true }).fill('budgeted');
  await expect(page.getByLabel('Requests per minute').inputValue()).resolves.toBe('0');
  await page.getByLabel('Requests per minute').fill('60');
  await page.getByLabel('Tokens per minute').fill('100000');
  await page.getByLabel('Requests at once').fill('2');
  await page.getByLabel('Budget (USD)').fill('10.12345');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByText('at most 4 decimal places').waitFor();
  await page.getByLabel('Budget (USD)').fill('10');
  await browser.screenshot(page, 'keys-limits-form');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByLabel('New key').waitFor();

  const stored = await stack.prisma.token.findFirstOrThrow({ where: { name: 'budgeted' } });
  expect({ rpm: stored.rpmLimit, tpm: stored.tpmLimit, concurrency: stored.maxConcurrency, budget: stored.budgetUsd?.toString(), period: stored.budgetPeriod, setBy: stored.limitsSetBy })
    .toEqual({ rpm: 60, tpm: 100_000, concurrency: 2, budget: '10', period: 'month', setBy: null });
  const row = keyRow(page, 'budgeted');
  await expect(row.getByRole('cell').nth(4).innerText()).resolves.toBe('60 req/min · 100,000 tokens/min · 2 at once\nUSD 0.00 of 10.00 this month');
  await browser.screenshot(page, 'keys-limits');

  // A daily budget and a lower rate; the concurrency limit taken off.
  await page.getByRole('button', { name: 'Edit budgeted' }).click();
  await expect(page.getByLabel('Budget (USD)').inputValue()).resolves.toBe('10');
  await page.getByLabel('Requests per minute').fill('30');
  await page.getByLabel('Requests at once').fill('0');
  await page.getByLabel('Budget period').selectOption({ label: 'Per day' });
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Key “budgeted” saved.').waitFor();
  await expect(row.getByRole('cell').nth(4).innerText()).resolves.toBe('30 req/min · 100,000 tokens/min\nUSD 0.00 of 10.00 today');
  await expect(stack.prisma.token.findUniqueOrThrow({ where: { id: stored.id } })).resolves.toMatchObject({ rpmLimit: 30, maxConcurrency: 0, budgetPeriod: 'day' });
  await page.context().close();
});

test("an admin limits a user's key from the Users page; the key shows its budget's use", async () => {
  const spent = await chargedKey(aliceKeyId);
  expect(spent.budgetUsedQuota).toBeGreaterThan(0n);
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await openFromMenu(page, 'Users', 'Users');
  await page.getByRole('button', { name: `Keys of ${ALICE.username}` }).click();
  const panel = page.getByRole('region', { name: `API keys of ${ALICE.username}` });
  await expect(page.evaluate<string | undefined>('document.activeElement?.id')).resolves.toBe('user-keys-title');
  const row = keyRow(page, ALICE_KEY, panel);
  await expect(row.getByRole('cell').nth(4).innerText()).resolves.toBe('No rate limits\nNo budget');

  await panel.getByRole('button', { name: `Edit ${ALICE_KEY}` }).click();
  await panel.getByRole('heading', { name: `Edit “${ALICE_KEY}” of ${ALICE.username}` }).waitFor();
  await panel.getByText(`${ALICE.username} may then only lower them`).waitFor();
  await panel.getByLabel('Requests per minute').fill('10');
  await panel.getByLabel('Budget (USD)').fill('5');
  await panel.getByRole('button', { name: 'Save changes' }).click();
  await panel.getByText(`Key “${ALICE_KEY}” of ${ALICE.username} saved.`).waitFor();
  await expect(row.getByRole('cell').nth(4).innerText()).resolves.toBe(`10 req/min\n${budgetText(Number(spent.budgetUsedQuota), '5.00', 'this month')}\nSet by an admin`);
  const root = await stack.api.call('get /api/user/self');
  await expect(stack.prisma.token.findUniqueOrThrow({ where: { id: aliceKeyId } })).resolves.toMatchObject({ rpmLimit: 10, limitsSetBy: root.id });
  await browser.screenshot(page, 'users-keys');
  await page.context().close();
});

test('on a phone, the owner may only lower the limits an admin set; keys are listed one block each', async () => {
  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, ALICE.username, ALICE.password);
  await openFromMenu(page, 'API keys', 'API keys');
  const table = page.getByRole('table', { name: 'Your API keys' });
  await expect(keyRow(page, ALICE_KEY, table).textContent()).resolves.toContain('Set by an admin');
  await expectStackedRows(table);
  await browser.screenshot(page, 'keys-limits');

  await page.getByRole('button', { name: `Edit ${ALICE_KEY}` }).click();
  await page.getByText("An admin set this key's rate limits and budget.").waitFor();
  await expect(page.getByLabel('Budget period').count()).resolves.toBe(0);
  await page.getByLabel('Requests per minute').fill('20');
  await page.getByLabel('Budget (USD)').fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('An admin set this limit: enter 1 to 10').waitFor();
  await expect(page.getByText('An admin set this budget: enter 0 to 5').isVisible()).resolves.toBe(true);
  await browser.screenshot(page, 'keys-limits-owner-form');
  await page.getByLabel('Requests per minute').fill('5');
  await page.getByLabel('Budget (USD)').fill('4.5');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText(`Key “${ALICE_KEY}” saved.`).waitFor();
  await expect(stack.prisma.token.findUniqueOrThrow({ where: { id: aliceKeyId } })).resolves.toMatchObject({ rpmLimit: 5, budgetPeriod: 'month' });
  await expect(keyRow(page, ALICE_KEY, table).textContent()).resolves.toContain('of 4.50 this month');
  await page.context().close();
});

test('on a phone, the users and usage tables are one block per row too', async () => {
  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await openFromMenu(page, 'Users', 'Users');
  const users = page.getByRole('table').first();
  await keyRow(page, ALICE.username, users).waitFor();
  await expectStackedRows(users);
  await browser.screenshot(page, 'users-stacked');

  // The admin's keys panel of a user stacks its table the same way.
  await page.getByRole('button', { name: `Keys of ${ALICE.username}` }).click();
  const keys = page.getByRole('table', { name: `API keys of ${ALICE.username}` });
  await keyRow(page, ALICE_KEY, keys).waitFor();
  await expectStackedRows(keys);
  await browser.screenshot(page, 'users-keys');
  await page.context().close();

  const own = await browser.newPage('phone');
  await browser.signIn(own, stack, ALICE.username, ALICE.password);
  await openFromMenu(own, 'Usage', 'Usage');
  const logs = own.getByRole('table', { name: 'Usage logs, newest first' });
  await logs.getByRole('cell', { name: MODEL }).first().waitFor();
  await expectStackedRows(logs);
  await browser.screenshot(own, 'usage-stacked');
  await own.context().close();

  const desktop = await browser.newPage('desktop');
  await browser.signIn(desktop, stack, ALICE.username, ALICE.password);
  await openFromMenu(desktop, 'Usage', 'Usage');
  await desktop.getByRole('table', { name: 'Usage logs, newest first' }).getByRole('cell', { name: MODEL }).first().waitFor();
  await browser.screenshot(desktop, 'usage-stacked');
  await desktop.context().close();
});
