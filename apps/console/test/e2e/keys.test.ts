// API keys end to end: a key created in the browser works with the OpenAI SDK through the edge and
// the relay (fake upstream, a priced model); its limits, disabling and deleting it take effect.
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { type ConsoleBrowser, openBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(90_000);

const MODEL = 'gpt-4o-mini';
const QUOTA_PER_UNIT = 500_000;

let stack: ConsoleStack;
let browser: ConsoleBrowser;

beforeAll(async () => {
  stack = await startConsoleStack();
  await stack.createChannel({ name: 'Fake OpenAI', type: 1, key: 'sk-upstream-secret', base_url: stack.upstream.url, models: MODEL });
  await stack.setOption('ModelRatio', JSON.stringify({ [MODEL]: 0.075 }));
  const root = await stack.api.call('get /api/user/self');
  await stack.api.call('put /api/user', { body: { id: root.id, quota: 20 * QUOTA_PER_UNIT } });
  browser = await openBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

function chat(apiKey: string, model = MODEL) {
  const openai = new OpenAI({ apiKey, baseURL: `${stack.baseUrl}/v1`, maxRetries: 0 });
  return openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] });
}

/** The HTTP status the relay answers `apiKey` with, once it is `expected` (key changes reach the relay's cache within moments). */
async function sdkStatusBecomes(apiKey: string, expected: number, model = MODEL): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = await chat(apiKey, model).then(
      () => 200,
      (err: unknown) => (err instanceof OpenAI.APIError ? (err.status ?? 0) : 0),
    );
    if (status === expected || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Opens the API keys page from the navigation (behind the Menu button on phones). */
async function openKeysPage(page: Page) {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
}

/** The key's row in the list. */
function keyRow(page: Page, name: string) {
  return page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
}


/** The key's row once the ledger has booked more than `usedQuota` on it (charges are written in batches). */
async function spentBeyond(tokenId: number, usedQuota: bigint | number) {
  for (let tries = 0; ; tries++) {
    const token = await stack.prisma.token.findUniqueOrThrow({ where: { id: tokenId } });
    if (token.usedQuota > usedQuota || tries > 40) return token;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
test('a key created in the browser calls the relay with the OpenAI SDK; limits, disabling and deleting apply', async () => {
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await openKeysPage(page);
  await page.getByText('No keys yet').waitFor();

  await page.getByRole('button', { name: 'Create key' }).click();
  // The form takes the focus: typing goes into Name.
  await page.keyboard.type('laptop');
  await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('laptop');
  await page.getByLabel('Unlimited quota').uncheck();
  await page.getByLabel('Remaining quota (USD)').fill('5');
  await page.getByRole('button', { name: 'Create', exact: true }).click();

  const newKey = page.getByLabel('New key');
  await newKey.waitFor();
  const apiKey = (await newKey.textContent()) ?? '';
  expect(apiKey).toMatch(/^sk-[A-Za-z0-9]{48}$/);
  await expect(page.getByText('shown only this once').isVisible()).resolves.toBe(true);
  await expect(page.getByLabel('Example commands').textContent()).resolves.toContain(`export OPENAI_BASE_URL=${stack.baseUrl}/v1`);
  const row = keyRow(page, 'laptop');
  await expect(row.getByRole('cell').nth(0).textContent()).resolves.toBe(`${apiKey.slice(0, 7)}...${apiKey.slice(-4)}`);
  await expect(row.textContent()).resolves.toContain('$5.00');
  await browser.screenshot(page, 'keys');

  const completion = await chat(apiKey);
  expect(completion.choices[0]?.message.content).toBeTruthy();

  // The charge reaches the list: reload until the key's spend shows.
  const stored = await stack.prisma.token.findFirstOrThrow({ where: { name: 'laptop' } });
  await spentBeyond(stored.id, 0);
  await page.reload();
  await expect(keyRow(page, 'laptop').getByRole('cell').nth(3).textContent()).resolves.not.toBe('$0.00');

  // Edit: allow only another model; the key is never shown again. A call made while the form is
  // open stays paid for: saving other limits does not put the form's older budget back.
  await page.getByRole('button', { name: 'Edit laptop' }).click();
  await expect(page.getByLabel('Remaining quota (USD)').inputValue()).resolves.not.toBe('');
  const { usedQuota: usedBefore } = await stack.prisma.token.findUniqueOrThrow({ where: { id: stored.id } });
  await chat(apiKey);
  const { remainQuota: remainingAfterCall } = await spentBeyond(stored.id, usedBefore);
  await page.getByLabel('Limit models').check();
  await page.getByLabel('Allowed models').fill('gpt-4o\ngpt-4.1');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Key “laptop” saved.').waitFor();
  await expect(page.getByLabel('New key').count()).resolves.toBe(0);
  await expect(stack.prisma.token.findUniqueOrThrow({ where: { id: stored.id } })).resolves.toMatchObject({ remainQuota: remainingAfterCall });
  await expect(sdkStatusBecomes(apiKey, 403)).resolves.toBe(403);
  await page.getByRole('button', { name: 'Edit laptop' }).click();
  await page.getByLabel('Limit models').uncheck();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Key “laptop” saved.').waitFor();
  await expect(sdkStatusBecomes(apiKey, 200)).resolves.toBe(200);

  // Disable: the SDK gets 401; enable again: it works.
  await page.getByRole('button', { name: 'Disable laptop' }).click();
  await keyRow(page, 'laptop').getByText('Disabled', { exact: true }).waitFor();
  await expect(sdkStatusBecomes(apiKey, 401)).resolves.toBe(401);
  await page.getByRole('button', { name: 'Enable laptop' }).click();
  await keyRow(page, 'laptop').getByText('Enabled', { exact: true }).waitFor();
  await expect(sdkStatusBecomes(apiKey, 200)).resolves.toBe(200);

  // Delete, after confirming.
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Delete laptop' }).click();
  await page.getByText('Key “laptop” deleted.').waitFor();
  await keyRow(page, 'laptop').waitFor({ state: 'detached' });
  await expect(sdkStatusBecomes(apiKey, 401)).resolves.toBe(401);
  await page.context().close();
});

test('on a phone: the form says what to fix, and a key with an expiry and an IP allow-list is created', async () => {
  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await openKeysPage(page);

  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByLabel('Unlimited quota').uncheck();
  await page.getByLabel('Expires', { exact: true }).check();
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByText('Enter a name').waitFor();
  await expect(page.getByText('Enter an amount in USD, 0 or more').isVisible()).resolves.toBe(true);
  await expect(page.getByText('Pick a date and time').isVisible()).resolves.toBe(true);

  await page.getByLabel('Name', { exact: true }).fill('phone');
  await page.getByLabel('Remaining quota (USD)').fill('1.25');
  await page.getByLabel('Expires at').fill('2099-12-31T23:30');
  await page.getByLabel('Allowed IP addresses').fill('203.0.113.0/24\n2001:db8::1');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByLabel('New key').waitFor();

  const token = await stack.prisma.token.findFirstOrThrow({ where: { name: 'phone' } });
  expect(Number(token.remainQuota)).toBe(1.25 * QUOTA_PER_UNIT);
  expect(token.expiresAt?.getFullYear()).toBe(2099);
  expect(token.allowIps).toBe('203.0.113.0/24\n2001:db8::1');
  await expect(keyRow(page, 'phone').textContent()).resolves.toContain('Dec 31, 2099');
  await browser.screenshot(page, 'keys');

  // This client's address is not in the allow-list.
  const apiKey = (await page.getByLabel('New key').textContent()) ?? '';
  await expect(sdkStatusBecomes(apiKey, 403)).resolves.toBe(403);
  await page.context().close();
});
