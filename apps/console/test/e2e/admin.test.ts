// The admin pages as root uses them on a fresh install: a channel to the fake upstream, its model
// priced in USD per 1M tokens, a channel test, a batch delete, a user and its balance, an option,
// and a payment event replayed; then every admin page at desktop and phone width.
import type { Page } from 'playwright-core';
import { openBrowser, type ConsoleBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(60_000);

const MODEL = 'e2e-model';
const CHANNEL = 'fake-openai';
const ADMIN_PAGES = ['channels', 'users', 'prices', 'options', 'payments'] as const;

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  stack = await startConsoleStack();
  browser = await openBrowser();
  page = await browser.newPage('desktop');
  // Destructive actions ask window.confirm first: root agrees.
  page.on('dialog', (dialog) => void dialog.accept());
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The options as the API stores them, ratio maps parsed. */
async function storedOption(key: string): Promise<unknown> {
  const options = await stack.api.call('get /api/option');
  const value = options.find((option) => option.key === key)?.value;
  return value === undefined ? undefined : JSON.parse(value);
}

async function openAdminPage(name: (typeof ADMIN_PAGES)[number]): Promise<void> {
  await page.goto(`/admin/${name}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
}

test('"Add channel" creates an OpenAI-compatible channel to the upstream', async () => {
  await openAdminPage('channels');
  await page.getByText('No channels yet').waitFor();
  await page.getByRole('button', { name: 'Add channel' }).click();

  // The fields follow the type: its default base URL, and the Responses setting of type 1 only.
  await page.getByLabel('Type').selectOption({ label: 'Anthropic (14)' });
  await expect(page.getByLabel('Base URL').getAttribute('placeholder')).resolves.toBe('https://api.anthropic.com');
  await expect(page.getByLabel('Responses API').count()).resolves.toBe(0);
  await page.getByLabel('Type').selectOption({ label: 'OpenAI-compatible (1)' });
  await expect(page.getByLabel('Base URL').getAttribute('placeholder')).resolves.toBe('https://api.openai.com');
  await page.getByLabel('Name').fill(CHANNEL);
  await page.getByLabel('Base URL').fill(stack.upstream.url);
  await page.getByLabel('Key').fill('sk-upstream-e2e');
  await page.getByLabel('Models').fill(`${MODEL}, other-model`);
  await page.getByLabel('Model mapping').fill('{"other-model": 5}');
  await page.getByRole('button', { name: 'Create channel' }).click();
  // The mapping is checked before anything is sent.
  await page.getByText('entry "other-model" must map a model name to a non-empty model name').waitFor();
  await page.getByLabel('Model mapping').fill('');
  await browser.screenshot(page, 'admin-channel-form');
  await page.getByRole('button', { name: 'Create channel' }).click();

  await page.getByRole('status').filter({ hasText: `Channel ${CHANNEL} created.` }).waitFor();
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: CHANNEL }) });
  await expect(row.textContent()).resolves.toMatch(/OpenAI-compatible.*Enabled.*e2e-model, other-model/);
  const { items } = await stack.api.call('get /api/channel');
  expect(items).toEqual([expect.objectContaining({ name: CHANNEL, type: 1, base_url: stack.upstream.url.replace(/\/+$/, ''), models: `${MODEL},other-model`, settings: { responses: 'native' } })]);
});

test('the Prices page prices the model in USD per 1M tokens and saves the ratios', async () => {
  await openAdminPage('prices');
  const addModel = page.getByRole('form', { name: 'Add a model' });
  await addModel.getByLabel('Model', { exact: true }).fill(MODEL);
  await addModel.getByLabel('Input price', { exact: true }).fill('1');
  await addModel.getByLabel('Cached input price', { exact: true }).fill('0.1');
  await addModel.getByLabel('Cache write price', { exact: true }).fill('1.25');
  await addModel.getByLabel('Output price', { exact: true }).fill('4');
  await page.getByRole('button', { name: 'Add model' }).click();
  await page.getByRole('button', { name: 'Save prices' }).click();

  await page.getByRole('status').filter({ hasText: 'Saved ModelRatio, CompletionRatio, CacheRatio, CacheCreationRatio.' }).waitFor();
  await expect(storedOption('ModelRatio')).resolves.toMatchObject({ [MODEL]: 0.5, 'gpt-4o-mini': 0.075 });
  await expect(storedOption('CompletionRatio')).resolves.toMatchObject({ [MODEL]: 4 });
  await expect(storedOption('CacheRatio')).resolves.toMatchObject({ [MODEL]: 0.1 });
  await expect(storedOption('CacheCreationRatio')).resolves.toMatchObject({ [MODEL]: 1.25 });

  // An edit in the table changes only the map it touches.
  await page.getByLabel('Filter models').fill('e2e');
  await page.getByLabel(`${MODEL} output price`).fill('6');
  await page.getByLabel(`${MODEL} input price`).fill('0');
  await page.getByText('with an input price of 0 they can only be 0 too').first().waitFor();
  await page.getByLabel(`${MODEL} input price`).fill('1');
  await page.getByRole('button', { name: 'Save prices' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved CompletionRatio.' }).waitFor();
  await expect(storedOption('CompletionRatio')).resolves.toMatchObject({ [MODEL]: 6 });
  await expect(page.getByLabel(`${MODEL} output price`).inputValue()).resolves.toBe('6');

  // The shipped long-context tiers and server tool prices are shown (edited as options).
  const tiers = page.getByRole('region', { name: 'Long-context prices (USD per 1M tokens)' });
  await tiers.getByRole('row', { name: 'claude-sonnet-4-5 200,000 6 0.6 7.5 22.5', exact: true }).waitFor();
  await tiers.getByRole('row', { name: 'gemini-2.5-pro 200,000 2.5 0.25 2.5 15', exact: true }).waitFor();
  const tools = page.getByRole('region', { name: 'Server tool prices' });
  await tools.getByRole('row', { name: 'web_search 0.01 10', exact: true }).waitFor();
  await tools.getByRole('row', { name: 'googleSearch 0.035 35', exact: true }).waitFor();
});

test('the Prices page adds, changes and removes prices per unit, saved as ModelPrice', async () => {
  await openAdminPage('prices');
  const unitPrices = page.getByRole('region', { name: 'Prices per unit (USD)' });
  // The shipped prices, with the unit each model's name tells.
  await expect(unitPrices.getByLabel('dall-e-3 USD per unit').inputValue()).resolves.toBe('0.04');
  await expect(unitPrices.getByRole('row').filter({ hasText: 'dall-e-3' }).getByRole('cell').first().innerText()).resolves.toBe('image');
  await expect(unitPrices.getByRole('row').filter({ hasText: 'whisper-1' }).getByRole('cell').first().innerText()).resolves.toBe('minute');
  await expect(unitPrices.getByRole('row').filter({ hasText: 'tts-1-hd' }).getByRole('cell').first().innerText()).resolves.toBe('1,000 characters');

  // An unsaved token price edit survives a save of the unit prices.
  await page.getByLabel('Filter models').fill(MODEL);
  await page.getByLabel(`${MODEL} output price`).fill('7');
  await page.getByText('Unsaved changes to CompletionRatio.').waitFor();

  const add = unitPrices.getByRole('form', { name: 'Add a unit price' });
  await add.getByLabel('Model', { exact: true }).fill('dall-e-3');
  await add.getByRole('button', { name: 'Add unit price' }).click();
  await add.getByText('dall-e-3 is already in the table').waitFor();
  await add.getByLabel('Model', { exact: true }).fill('e2e-image-model');
  await add.getByText('Per image', { exact: true }).waitFor();
  await add.getByLabel('USD per unit').fill('0.05');
  await add.getByRole('button', { name: 'Add unit price' }).click();
  await unitPrices.getByLabel('dall-e-3 USD per unit').fill('0.08');
  await unitPrices.getByRole('button', { name: 'Remove tts-1-hd unit price' }).click();
  await unitPrices.getByText('Unsaved changes to ModelPrice (1 model removed).').waitFor();
  await browser.screenshot(page, 'admin-unit-prices');
  await unitPrices.getByRole('button', { name: 'Save unit prices' }).click();

  await page.getByRole('status').filter({ hasText: 'Saved ModelPrice.' }).waitFor();
  const stored = (await storedOption('ModelPrice')) as Record<string, number>;
  expect(stored).toMatchObject({ 'dall-e-3': 0.08, 'e2e-image-model': 0.05, 'whisper-1': 0.006 });
  expect(stored).not.toHaveProperty(['tts-1-hd']);
  await expect(unitPrices.getByLabel('e2e-image-model USD per unit').inputValue()).resolves.toBe('0.05');
  await expect(page.getByLabel(`${MODEL} output price`).inputValue()).resolves.toBe('7');
  await page.getByText('Unsaved changes to CompletionRatio.').waitFor();
  // What a user's group pays, in the price list every user reads.
  const pricing = await stack.api.call('get /api/pricing');
  expect(pricing.unit_prices).toContainEqual({ model_name: 'e2e-image-model', usd_per_unit: 0.05, unit: 'image' });

  await page.getByRole('form', { name: 'Model prices (USD per 1M tokens)' }).getByRole('button', { name: 'Discard changes' }).click();
  await expect(page.getByLabel(`${MODEL} output price`).inputValue()).resolves.toBe('6');
});

test('"Test" sends a request through the channel and shows the result', async () => {
  await openAdminPage('channels');
  await page.getByRole('button', { name: `Test ${CHANNEL}` }).click();

  await page.getByRole('status').filter({ hasText: new RegExp(`Test of ${CHANNEL} succeeded in \\d+ ms\\.`) }).waitFor();
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: CHANNEL }) });
  await expect(row.getByRole('cell', { name: /^\d+ ms$/ }).count()).resolves.toBe(1);
});

test('an edit keeps the key when its field is left empty; Disable and Enable switch the status', async () => {
  const before = await stack.prisma.channel.findFirstOrThrow({ where: { name: CHANNEL } });
  await page.getByRole('button', { name: `Edit ${CHANNEL}` }).click();
  await expect(page.getByLabel('Key').inputValue()).resolves.toBe('');
  await expect(page.getByLabel('Responses API').inputValue()).resolves.toBe('native');
  await page.getByLabel('Priority').fill('5');
  await page.getByLabel('Responses API').selectOption('chat');
  await page.getByRole('button', { name: 'Save channel' }).click();

  await page.getByRole('status').filter({ hasText: `Channel ${CHANNEL} saved.` }).waitFor();
  const after = await stack.prisma.channel.findFirstOrThrow({ where: { name: CHANNEL } });
  // Encrypted with a fresh IV on every write: an unchanged ciphertext means the key was not sent.
  expect(after.keyEnc).toBe(before.keyEnc);
  await expect(stack.api.call('get /api/channel/:id', { params: { id: String(after.id) } })).resolves.toMatchObject({ priority: 5, settings: { responses: 'chat' } });

  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: CHANNEL }) });
  await page.getByRole('button', { name: `Disable ${CHANNEL}` }).click();
  await row.getByText('Disabled', { exact: true }).waitFor();
  await page.getByRole('button', { name: `Enable ${CHANNEL}` }).click();
  await row.getByText('Enabled', { exact: true }).waitFor();
});

test('channels selected with their checkboxes are deleted together', async () => {
  for (const name of ['spare-1', 'spare-2']) await stack.createChannel({ name, type: 1, key: 'sk-spare', models: MODEL, base_url: stack.upstream.url });
  await openAdminPage('channels');
  await page.getByRole('checkbox', { name: 'Select spare-1', exact: true }).check();
  await page.getByRole('checkbox', { name: 'Select spare-2', exact: true }).check();
  await page.getByText('2 selected').waitFor();
  await page.getByRole('button', { name: 'Delete selected' }).click();

  await page.getByRole('status').filter({ hasText: 'Deleted 2 channels.' }).waitFor();
  await page.getByRole('rowheader', { name: 'spare-1' }).waitFor({ state: 'detached' });
  const { items } = await stack.api.call('get /api/channel');
  expect(items.map((channel) => channel.name)).toEqual([CHANNEL]);

  // Select-all covers the page; nothing is deleted without a selection.
  await page.getByRole('checkbox', { name: 'Select all channels on this page' }).check();
  await expect(page.getByRole('checkbox', { name: `Select ${CHANNEL}`, exact: true }).isChecked()).resolves.toBe(true);
  await page.getByRole('checkbox', { name: 'Select all channels on this page' }).uncheck();
  await expect(page.getByRole('button', { name: 'Delete selected' }).isDisabled()).resolves.toBe(true);
});

test('the Users page creates a user with a balance in USD and changes it', async () => {
  await openAdminPage('users');
  await page.getByRole('button', { name: 'Add user' }).click();
  await page.getByLabel('Username').fill('e2e_user');
  await page.getByLabel('Password').fill('e2e-user-password');
  await page.getByLabel('Display name').fill('E2E user');
  await page.getByLabel('Initial balance (USD)').fill('5');
  await page.getByText('= 2,500,000 quota').waitFor();
  await page.getByRole('button', { name: 'Create user' }).click();

  await page.getByRole('status').filter({ hasText: 'User e2e_user created.' }).waitFor();
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'e2e_user' }) });
  await expect(row.textContent()).resolves.toMatch(/E2E user.*User.*Enabled.*default.*\$5\.00/);

  await page.getByRole('button', { name: 'Edit e2e_user' }).click();
  await page.getByLabel('Balance (USD)').fill('12.5');
  await page.getByRole('button', { name: 'Save user' }).click();
  await page.getByRole('status').filter({ hasText: 'User e2e_user saved.' }).waitFor();
  await row.getByText('$12.50').waitFor();
  const created = await stack.prisma.user.findFirstOrThrow({ where: { username: 'e2e_user' } });
  expect(Number(created.quota)).toBe(6_250_000);

  await page.getByRole('button', { name: 'Disable e2e_user' }).click();
  await page.getByRole('status').filter({ hasText: 'e2e_user is disabled.' }).waitFor();
  await page.getByRole('button', { name: 'Enable e2e_user' }).click();
  await page.getByRole('button', { name: 'Promote e2e_user' }).click();
  await page.getByRole('status').filter({ hasText: 'e2e_user is now an admin.' }).waitFor();
  await expect(row.textContent()).resolves.toMatch(/Admin.*Enabled/);
  await expect(stack.prisma.user.findFirstOrThrow({ where: { username: 'e2e_user' } })).resolves.toMatchObject({ role: 10, status: 1 });
});

test('Delete removes a user from the list after a confirmation', async () => {
  await stack.api.call('post /api/user', { body: { username: 'leaving', password: 'leaving-password' } });
  await openAdminPage('users');
  await page.getByRole('button', { name: 'Delete leaving' }).click();
  await page.getByRole('status').filter({ hasText: 'leaving is deleted.' }).waitFor();
  await page.getByRole('rowheader', { name: 'leaving' }).waitFor({ state: 'detached' });
});

test('the Options page saves an option, shows the stored value, and shows why a value is refused', async () => {
  await openAdminPage('options');
  await page.getByLabel('QuotaForNewUser', { exact: true }).fill('1000000');
  await page.getByText('$2.00').first().waitFor();
  await page.getByRole('button', { name: 'Save QuotaForNewUser' }).click();

  await page.getByRole('status').filter({ hasText: 'Saved QuotaForNewUser: 1000000' }).waitFor();
  await expect(page.getByLabel('QuotaForNewUser', { exact: true }).inputValue()).resolves.toBe('1000000');
  await expect(storedOption('QuotaForNewUser')).resolves.toBe(1_000_000);

  await page.getByLabel('RetryTimes', { exact: true }).fill('11');
  await page.getByRole('button', { name: 'Save RetryTimes' }).click();
  await page.getByRole('alert').filter({ hasText: 'RetryTimes: must be from 0 to 10' }).waitFor();
  await expect(storedOption('RetryTimes')).resolves.toBe(2);
  // Secrets are write-only: never shown back.
  await expect(page.getByLabel('StripeWebhookSecret', { exact: true }).inputValue()).resolves.toBe('');
  await expect(page.getByLabel('StripeWebhookSecret', { exact: true }).getAttribute('type')).resolves.toBe('password');
});

test('the Payments page lists a webhook event and replays it', async () => {
  const eventId = 'evt_console_e2e_unknown_top_up';
  const payload = JSON.stringify({
    id: eventId,
    object: 'event',
    type: 'checkout.session.completed',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: 'cs_console_e2e', object: 'checkout.session', client_reference_id: 'ref_no_such_top_up', payment_status: 'paid', amount_total: 500, currency: 'usd' } },
  });
  expect((await stack.deliverStripeEvent(payload)).status).toBe(200);
  // The worker rejects it: no top-up has that trade number.
  for (let waited = 0; (await stack.prisma.paymentEvent.findFirst({ where: { eventId } }))?.status !== 'failed'; waited += 100) {
    if (waited > 15_000) throw new Error('the worker did not process the event');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  await openAdminPage('payments');
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: eventId }) });
  await expect(row.textContent()).resolves.toMatch(/checkout\.session\.completed.*failed.*ref_no_such_top_up.*unknown trade_no/);
  await page.getByRole('button', { name: `Replay ${eventId}` }).click();

  await page.getByRole('status').filter({ hasText: new RegExp(`Event ${eventId} is (queued again|already waiting in the queue)`) }).waitFor();
});

test('an admin who is not root is told that options and prices are root-only and cannot create admins', async () => {
  await stack.api.call('post /api/user', { body: { username: 'helper_admin', password: 'helper-admin-password', role: 10 } });
  const adminPage = await browser.newPage('desktop');
  await browser.signIn(adminPage, stack, 'helper_admin', 'helper-admin-password');
  await adminPage.goto('/admin/options');
  await adminPage.getByText('Options are root-only').waitFor();
  await adminPage.goto('/admin/prices');
  await adminPage.getByText('only the root user can see and change').waitFor();
  await adminPage.goto('/admin/users');
  await adminPage.getByRole('button', { name: 'Add user' }).click();
  await expect(adminPage.getByLabel('Role').locator('option').allTextContents()).resolves.toEqual(['User']);
  await adminPage.context().close();
});

describe.each(['desktop', 'phone'] as const)('screenshots at %s width', (viewport) => {
  test.each(ADMIN_PAGES)('%s', async (name) => {
    const shot = viewport === 'desktop' ? page : await phonePage();
    await shot.goto(`/admin/${name}`);
    await shot.getByRole('heading', { level: 1 }).waitFor();
    // Loaded: every page shows a panel or a table once its data is in.
    await shot.locator('main .panel, main .table-wrap').first().waitFor();
    await browser.screenshot(shot, `admin-${name}`);
  });
});

let phone: Page | undefined;

/** One signed-in phone page for all the phone screenshots. */
async function phonePage(): Promise<Page> {
  if (phone) return phone;
  const opened = await browser.newPage('phone');
  await browser.signIn(opened, stack, stack.root.username, stack.root.password);
  phone = opened;
  return opened;
}
