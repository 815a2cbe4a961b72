// The low-balance warning end to end: set up on the Notifications page (a private webhook address
// refused until root allows them, the secret write-only), then a call through the relay that takes
// the balance below the threshold makes the worker POST one signed warning; by email on a phone.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@modelgate/testing/processes';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { type ConsoleBrowser, openBrowser } from './support/browser';
import { signedInClient, type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(120_000);

const MODEL = 'console-warning-model';
const QUOTA_PER_UNIT = 500_000;
const NINA = { username: 'nina', password: 'nina-password-1' };
const OMAR = { username: 'omar', password: 'omar-password-1' };
const SECRET = 'whsec-console-e2e-41b7';

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let receiver: Server;
let hookUrl: string;
const deliveries: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  stack = await startConsoleStack();
  await stack.createChannel({ name: 'fake OpenAI', type: 1, key: 'sk-fake-upstream', base_url: stack.upstream.url, models: MODEL });
  await stack.setOption('ModelRatio', JSON.stringify({ [MODEL]: 10 }));
  // Exactly USD 10: the first charge takes nina below a USD 10 threshold.
  await stack.api.call('post /api/user', { body: { ...NINA, quota: 10 * QUOTA_PER_UNIT } });
  await stack.api.call('post /api/user', { body: { ...OMAR, quota: 10 * QUOTA_PER_UNIT } });
  await stack.prisma.user.update({ where: { username: OMAR.username }, data: { email: 'omar@example.com' } });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/modelgate`;
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function openNotificationsPage(page: Page) {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('link', { name: 'Notifications' }).click();
  await page.getByRole('heading', { name: 'Low-balance warning' }).waitFor();
  await page.getByLabel('Warn me').waitFor();
}

test('webhook: a private address refused until root allows it, the secret never shown, one signed POST when a call crosses the threshold', async () => {
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, NINA.username, NINA.password);
  await openNotificationsPage(page);
  await page.getByText('No warning is sent.').waitFor();

  await page.getByLabel('Warn me').selectOption({ label: 'By webhook' });
  await page.getByLabel('Threshold (USD)').fill('10');
  await page.getByLabel('Webhook URL').fill(hookUrl);
  await page.getByLabel('Signing secret').fill(SECRET);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('.notification-form').getByRole('alert').filter({ hasText: 'non-public address' }).waitFor();

  await stack.setOption('WebhookAllowPrivate', true);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').waitFor();
  await expect(page.getByText('Warning by webhook below $10.00.').isVisible()).resolves.toBe(true);
  await expect(page.getByLabel('Signing secret').inputValue()).resolves.toBe('');
  await expect(page.getByText('Set', { exact: true }).isVisible()).resolves.toBe(true);
  await expect(page.content()).resolves.not.toContain(SECRET);
  const nina = await stack.prisma.user.findUniqueOrThrow({ where: { username: NINA.username } });
  expect([nina.notifyType, nina.quotaWarningThreshold, nina.webhookUrl]).toEqual(['webhook', 10n * BigInt(QUOTA_PER_UNIT), hookUrl]);
  expect(nina.webhookSecretEnc).not.toContain(SECRET);
  await browser.screenshot(page, 'notifications');

  // A call through the relay takes the balance from USD 10 to below it: one warning, signed with the secret typed above.
  const client = await signedInClient(stack.baseUrl, NINA.username, NINA.password);
  const { key } = await client.call('post /api/token', { body: { name: 'warning e2e key' } });
  const openai = new OpenAI({ apiKey: key, baseURL: `${stack.baseUrl}/v1` });
  await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Spend a little' }] });
  const [delivery] = await waitFor(() => deliveries.length > 0 && deliveries, 'the balance warning webhook', 30_000);
  const balance = (await stack.prisma.user.findUniqueOrThrow({ where: { id: nina.id } })).quota;
  expect(delivery?.headers['x-modelgate-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(delivery?.body ?? '').digest('hex')}`);
  expect(JSON.parse(delivery?.body ?? '')).toEqual({
    type: 'balance.low',
    user_id: nina.id,
    username: NINA.username,
    quota: Number(balance),
    threshold: 10 * QUOTA_PER_UNIT,
    quota_per_unit: QUOTA_PER_UNIT,
    crossed_at: expect.any(Number),
  });

  // Further calls below the threshold send nothing more.
  await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Spend a little more' }] });
  await waitFor(async () => (await stack.prisma.log.count({ where: { userId: nina.id, type: 2 } })) === 2, 'the second call to be booked');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(deliveries).toHaveLength(1);
  await page.context().close();
});

test('email on a phone: the account address by default, saved and shown', async () => {
  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, OMAR.username, OMAR.password);
  await openNotificationsPage(page);
  await page.getByLabel('Warn me').selectOption({ label: 'By email' });
  await page.getByLabel('Threshold (USD)').fill('2.5');
  await expect(page.getByText('Leave empty to use your account email (omar@example.com).').isVisible()).resolves.toBe(true);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').waitFor();
  await expect(page.getByText('Warning by email below $2.50.').isVisible()).resolves.toBe(true);
  const omar = await stack.prisma.user.findUniqueOrThrow({ where: { username: OMAR.username } });
  expect([omar.notifyType, omar.quotaWarningThreshold, omar.notificationEmail]).toEqual(['email', 1_250_000n, null]);
  const width = await page.evaluate<number>('document.documentElement.scrollWidth');
  expect(width).toBeLessThanOrEqual(375);
  await browser.screenshot(page, 'notifications');

  // The webhook fields, as a phone shows them.
  await page.getByLabel('Warn me').selectOption({ label: 'By webhook' });
  await page.getByLabel('Webhook URL').waitFor();
  await expect(page.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(375);
  await browser.screenshot(page, 'notifications-webhook');
  await page.context().close();
});
