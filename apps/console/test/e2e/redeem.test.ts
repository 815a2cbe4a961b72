// Redemption codes end to end: root makes a batch on the admin page (the codes shown once, copied and
// downloaded), a user redeems one on the Wallet page and sees the balance grow, and redeeming it again
// is refused; the admin list shows it used. Both pages at desktop and phone width.
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { openBrowser, type ConsoleBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(90_000);

const USER = { username: 'redeem_carol', password: 'redeem-carol-password' };
const QUOTA_PER_UNIT = 500_000;

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let codes: string[] = [];

beforeAll(async () => {
  stack = await startConsoleStack();
  await stack.api.call('post /api/user', { body: { ...USER, quota: 1 * QUOTA_PER_UNIT } });
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

function balanceCard(page: Page) {
  return page.getByRole('region', { name: 'Balance' }).locator('.card').filter({ hasText: /^Balance/ });
}

function codeRows(page: Page) {
  return page.getByRole('table', { name: 'Redemption codes' }).locator('tbody tr');
}

test('root creates a batch of codes, shown once with copy-all and a .txt download', async () => {
  const page = await browser.newPage('desktop');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await page.getByRole('link', { name: 'Redemptions' }).click();
  await page.getByRole('heading', { name: 'Redemption codes', level: 1 }).waitFor();
  await page.getByText('No redemption codes yet.').waitFor();

  await page.getByRole('button', { name: 'Create codes' }).click();
  const form = page.getByRole('region', { name: 'Create redemption codes' });
  await form.getByRole('button', { name: 'Create codes' }).click();
  await form.getByText('Enter a name').waitFor();
  await form.getByLabel('Name').fill('Spring promo');
  await form.getByLabel('Value of each code (USD)').fill('2.5');
  await form.getByText('Each code adds 1,250,000 quota ($2.50)', { exact: false }).waitFor();
  await form.getByLabel('Number of codes').fill('3');
  await form.getByLabel('Expires', { exact: true }).check();
  await form.getByLabel('Expires at').fill('2099-12-31T23:59');
  await form.getByRole('button', { name: 'Create codes' }).click();

  const created = page.getByRole('region', { name: /3 codes “Spring promo” created/ });
  await created.getByText('shown only this once').waitFor();
  codes = await created.getByRole('list', { name: 'New codes' }).getByRole('listitem').allInnerTexts();
  expect(codes).toHaveLength(3);
  for (const code of codes) expect(code).toMatch(/^[A-Za-z0-9]{32}$/);

  await created.getByRole('button', { name: 'Copy all' }).click();
  await created.getByText('Copied').waitFor();
  await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(`${codes.join('\n')}\n`);
  const [download] = await Promise.all([page.waitForEvent('download'), created.getByRole('button', { name: 'Download .txt' }).click()]);
  expect(download.suggestedFilename()).toBe('redemption-codes-spring-promo.txt');
  await expect(readFile(await download.path(), 'utf8')).resolves.toBe(`${codes.join('\n')}\n`);

  // The list shows each code only by its first characters.
  await expect(codeRows(page).count()).resolves.toBe(3);
  const listed = await page.getByRole('table', { name: 'Redemption codes' }).innerText();
  for (const code of codes) {
    expect(listed).toContain(`${code.slice(0, 4)}…`);
    expect(listed).not.toContain(code);
  }
  expect(listed).toContain('$2.50');
  await browser.screenshot(page, 'admin-redemptions');

  await created.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByRole('list', { name: 'New codes' }).count()).resolves.toBe(0);
  await page.context().close();
});

test('a user redeems a code on the wallet and the balance grows; the same code again is refused', async () => {
  const [code] = codes;
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.getByRole('link', { name: 'Wallet' }).click();
  await balanceCard(page).getByText('$1.00').waitFor();

  const redeem = page.getByRole('region', { name: 'Redeem a code' });
  await redeem.getByRole('button', { name: 'Redeem' }).click();
  await redeem.getByText('Enter a redemption code').waitFor();
  await redeem.getByLabel('Redemption code').fill(` ${code} `);
  await redeem.getByRole('button', { name: 'Redeem' }).click();
  await redeem.getByRole('status').filter({ hasText: 'Added $2.50 (1,250,000 quota) to your balance.' }).waitFor();
  await balanceCard(page).getByText('$3.50').waitFor();
  await expect(redeem.getByLabel('Redemption code').inputValue()).resolves.toBe('');

  await redeem.getByLabel('Redemption code').fill(code!);
  await redeem.getByRole('button', { name: 'Redeem' }).click();
  await redeem.getByRole('alert').filter({ hasText: 'not valid or has already been used' }).waitFor();
  await expect(redeem.getByRole('status').count()).resolves.toBe(0);
  await balanceCard(page).getByText('$3.50').waitFor();
  await browser.screenshot(page, 'wallet-redeem');

  const logs = await stack.prisma.log.findMany({ where: { type: 1 } });
  expect(logs.map((row) => ({ quota: row.quota, content: row.content }))).toEqual([{ quota: 1_250_000n, content: `redeemed code ${code!.slice(0, 4)}… (Spring promo)` }]);
  await page.context().close();
});

test('the admin list shows the code used, and disables and deletes others', async () => {
  const [used, second, third] = codes;
  const page = await browser.newPage('desktop');
  page.on('dialog', (dialog) => void dialog.accept());
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await page.goto('/admin/redemptions');
  const usedRow = codeRows(page).filter({ hasText: `${used!.slice(0, 4)}…` });
  await usedRow.getByText('Used').waitFor();
  await usedRow.getByText(/by user #\d+/).waitFor();
  await expect(usedRow.getByRole('button', { name: /^Disable/ }).count()).resolves.toBe(0);

  const secondRow = codeRows(page).filter({ hasText: `${second!.slice(0, 4)}…` });
  await secondRow.getByRole('button', { name: /^Disable/ }).click();
  await page.getByRole('status').filter({ hasText: `Code ${second!.slice(0, 4)}… (“Spring promo”) is disabled.` }).waitFor();
  await secondRow.getByText('Disabled').waitFor();
  await secondRow.getByRole('button', { name: /^Enable/ }).waitFor();

  await codeRows(page).filter({ hasText: `${third!.slice(0, 4)}…` }).getByRole('button', { name: /^Delete/ }).click();
  await page.getByRole('status').filter({ hasText: 'deleted' }).waitFor();
  await expect(codeRows(page).count()).resolves.toBe(2);

  await page.getByLabel('Filter by name').fill('autumn');
  await page.getByText('No code has a name matching the filter.').waitFor();
  await page.getByLabel('Filter by name').fill('SPRING');
  await usedRow.waitFor();
  await expect(codeRows(page).count()).resolves.toBe(2);
  await page.context().close();

  // The disabled code is refused on the wallet with its own reason.
  const wallet = await browser.newPage('desktop');
  await browser.signIn(wallet, stack, USER.username, USER.password);
  await wallet.goto('/wallet');
  const redeem = wallet.getByRole('region', { name: 'Redeem a code' });
  await redeem.getByLabel('Redemption code').fill(second!);
  await redeem.getByRole('button', { name: 'Redeem' }).click();
  await redeem.getByRole('alert').filter({ hasText: 'has been disabled' }).waitFor();
  await wallet.context().close();
});

test('both pages at phone width: the codes and the top-ups as stacked rows', async () => {
  await stack.prisma.topUp.create({
    data: { tradeNo: 'ref_phone_e2e', userId: (await stack.prisma.user.findFirstOrThrow({ where: { username: USER.username } })).id, amount: 5, money: 5, status: 'pending', provider: 'stripe' },
  });
  const admin = await browser.newPage('phone');
  await browser.signIn(admin, stack, stack.root.username, stack.root.password);
  await admin.goto('/admin/redemptions');
  await codeRows(admin).first().waitFor();
  // Stacked: no header row, and each row fits the screen without sideways scrolling.
  await expect(admin.getByRole('table', { name: 'Redemption codes' }).locator('thead').isVisible()).resolves.toBe(false);
  const wrap = admin.locator('.table-wrap').first();
  await expect(wrap.evaluate((element) => element.scrollWidth <= element.clientWidth)).resolves.toBe(true);
  await browser.screenshot(admin, 'admin-redemptions');
  await admin.context().close();

  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.goto('/wallet');
  const history = page.getByRole('region', { name: 'Top-up history' });
  await history.getByText('ref_phone_e2e').waitFor();
  await expect(history.locator('thead').isVisible()).resolves.toBe(false);
  await expect(history.locator('.table-wrap').evaluate((element) => element.scrollWidth <= element.clientWidth)).resolves.toBe(true);
  await page.getByRole('region', { name: 'Redeem a code' }).getByLabel('Redemption code').waitFor();
  await browser.screenshot(page, 'wallet-redeem');
  await page.context().close();
});
