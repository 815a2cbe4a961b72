// The Wallet page against the fake Stripe: a top-up sends the browser to the checkout link, Stripe's
// signed webhook credits it, and the page shows it; the invitation link; moving affiliate earnings.
import { checkoutEvent } from '@modelgate/testing/fake-stripe';
import type { Page } from 'playwright-core';
import { openBrowser, type ConsoleBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack, STRIPE } from './support/stack';

jest.setTimeout(90_000);

const USER = { username: 'wallet_bob', password: 'wallet-bob-password' };
const QUOTA_PER_UNIT = 500_000;
const CHECKOUT_ORIGIN = 'https://checkout.stripe.test';

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let userId: number;

beforeAll(async () => {
  stack = await startConsoleStack();
  const bob = await stack.api.call('post /api/user', { body: { ...USER, quota: 1 * QUOTA_PER_UNIT } });
  userId = bob.id;
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

function balanceCard(page: Page) {
  return page.getByRole('region', { name: 'Balance' }).locator('.card').filter({ hasText: /^Balance/ });
}

function historyRow(page: Page, tradeNo: string) {
  return page.getByRole('region', { name: 'Top-up history' }).getByRole('row').filter({ hasText: tradeNo });
}

/** Polls the database until the worker has processed the top-up's webhook. */
async function waitForTopUpStatus(tradeNo: string, status: string) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const topUp = await stack.prisma.topUp.findUniqueOrThrow({ where: { tradeNo } });
    if (topUp.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`top-up ${tradeNo} did not become ${status} within 10 s`);
}

test('a Stripe top-up goes to the checkout link and, once Stripe reports it paid, shows as success with the higher balance', async () => {
  const page = await browser.newPage('desktop');
  // The fake checkout host does not exist: the browser gets a stand-in page for it.
  await page.route(`${CHECKOUT_ORIGIN}/**`, (route) => route.fulfill({ contentType: 'text/html', body: '<title>Fake Stripe checkout</title><h1>Pay</h1>' }));
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.getByRole('link', { name: 'Wallet' }).click();
  await page.getByRole('heading', { name: 'Wallet' }).waitFor();
  await expect(balanceCard(page).innerText()).resolves.toContain('$1.00');
  await page.getByText('No top-ups yet.').waitFor();

  const amount = page.getByLabel('Amount');
  await amount.fill('0');
  await page.getByRole('button', { name: 'Pay with Stripe' }).click();
  await page.getByText('At least 1', { exact: true }).waitFor();
  await amount.fill('5');
  await expect(page.getByText('Adds $5.00 to your balance (2,500,000 quota).', { exact: false }).count()).resolves.toBe(1);
  await page.getByRole('button', { name: 'Pay with Stripe' }).click();

  await page.waitForURL(`${CHECKOUT_ORIGIN}/c/pay/**`);
  const sessionId = new URL(page.url()).pathname.split('/').at(-1) ?? '';
  const session = stack.stripe.sessions.get(sessionId);
  expect(session).toBeDefined();
  const created = stack.stripe.requests.find((request) => request.path === '/v1/checkout/sessions' && request.form.client_reference_id === session?.client_reference_id);
  expect(created?.form).toMatchObject({ 'line_items[0][price]': STRIPE.priceId, 'line_items[0][quantity]': '5' });
  const tradeNo = session?.client_reference_id ?? '';

  // Back in the console (as the checkout's success link would send the payer) before the webhook: the top-up waits.
  await page.goto('/wallet?checkout=success');
  await page.getByRole('status').filter({ hasText: 'Stripe has your payment' }).waitFor();
  await historyRow(page, tradeNo).getByText('Pending').waitFor();

  const { payload } = checkoutEvent({ type: 'checkout.session.completed', session: session!, paymentStatus: 'paid' });
  const delivery = await stack.deliverStripeEvent(payload);
  expect(delivery.status).toBe(200);
  await waitForTopUpStatus(tradeNo, 'success');

  await page.getByRole('button', { name: 'Refresh' }).click();
  await historyRow(page, tradeNo).getByText('Success').waitFor();
  const cells = await historyRow(page, tradeNo).getByRole('cell').allInnerTexts();
  expect(cells.slice(1)).toEqual(['$5.00', 'Success', '5.00', expect.stringMatching(/\d{4}/), tradeNo]);
  await balanceCard(page).getByText('$6.00').waitFor();
  await browser.screenshot(page, 'wallet');
  await page.context().close();
});

test('the invitation link is shown and copied, and affiliate earnings move to the balance', async () => {
  await stack.prisma.user.update({ where: { id: userId }, data: { affQuota: 3 * QUOTA_PER_UNIT, affHistoryQuota: 3 * QUOTA_PER_UNIT, affCount: 2 } });
  const page = await browser.newPage('desktop');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.goto('/wallet');
  const before = (await balanceCard(page).innerText()).match(/\$[\d,.]+/)?.[0];

  const affCode = (await stack.prisma.user.findUniqueOrThrow({ where: { id: userId } })).affCode;
  const link = page.getByLabel('Invitation link');
  await expect(link.inputValue()).resolves.toBe(`${stack.baseUrl}/register?aff=${affCode}`);
  await page.getByRole('button', { name: 'Copy link' }).click();
  await page.getByText('Copied').waitFor();
  await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(`${stack.baseUrl}/register?aff=${affCode}`);

  const affiliate = page.getByRole('region', { name: 'Invite friends' });
  await expect(affiliate.locator('.card').filter({ hasText: 'Invited users' }).innerText()).resolves.toContain('2');
  await expect(affiliate.locator('.card').filter({ hasText: 'Ready to transfer' }).innerText()).resolves.toContain('$3.00');

  const quota = page.getByLabel('Quota to transfer');
  await expect(quota.inputValue()).resolves.toBe(String(3 * QUOTA_PER_UNIT));
  await quota.fill(String(QUOTA_PER_UNIT - 1));
  await page.getByRole('button', { name: 'Transfer to balance' }).click();
  await page.getByText('At least 500,000 ($1.00)').waitFor();
  await quota.fill(String(2 * QUOTA_PER_UNIT));
  await page.getByRole('button', { name: 'Transfer to balance' }).click();

  await page.getByRole('status').filter({ hasText: 'Moved $2.00 to your balance.' }).waitFor();
  await affiliate.locator('.card').filter({ hasText: 'Ready to transfer' }).getByText('$1.00').waitFor();
  const after = (await balanceCard(page).innerText()).match(/\$[\d,.]+/)?.[0];
  expect(Number(after?.slice(1)) - Number(before?.slice(1))).toBeCloseTo(2);
  const user = await stack.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  expect(Number(user.affQuota)).toBe(QUOTA_PER_UNIT);
  await page.context().close();
});

test('the wallet at phone width', async () => {
  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.goto('/wallet');
  // Stacked rows on phones: the header row is hidden, so the first top-up is the first visible row.
  await page.getByRole('region', { name: 'Top-up history' }).getByRole('row').first().waitFor();
  await page.getByLabel('Invitation link').waitFor();
  await browser.screenshot(page, 'wallet');
  await page.context().close();
});

test('with Stripe not set up, the top-up form is disabled and says why', async () => {
  await stack.setOption('StripePriceId', '');
  try {
    const page = await browser.newPage('desktop');
    await browser.signIn(page, stack, USER.username, USER.password);
    await page.goto('/wallet');
    await page.getByText('Top-ups are turned off').waitFor();
    await expect(page.getByRole('button', { name: 'Pay with Stripe' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByLabel('Amount').isDisabled()).resolves.toBe(true);
    await page.context().close();
  } finally {
    await stack.setOption('StripePriceId', STRIPE.priceId);
  }
});

test('a balance below 0 (usage beyond a reservation, charged in full) shows as a debt on the wallet and the dashboard', async () => {
  const { quota } = await stack.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  const charge = quota + 625_000n;
  // Booked as the relay books a charge: the balance and its consume row together.
  await stack.prisma.$transaction([
    stack.prisma.user.update({ where: { id: userId }, data: { quota: { decrement: charge }, usedQuota: { increment: charge }, requestCount: { increment: 1 } } }),
    stack.prisma.log.create({ data: { userId, type: 2, quota: -charge, content: 'model ratio 1' } }),
  ]);
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, USER.username, USER.password);
  await page.goto('/wallet');
  await balanceCard(page).getByText('Debt: $1.25').waitFor();
  await expect(balanceCard(page).innerText()).resolves.toContain('-625,000 quota; top up to continue');
  await page.goto('/');
  const dashboardBalance = page.getByRole('region', { name: 'Account' }).locator('.card').filter({ hasText: /^Balance/ });
  await dashboardBalance.getByText('Debt: $1.25').waitFor();
  await page.context().close();
});
