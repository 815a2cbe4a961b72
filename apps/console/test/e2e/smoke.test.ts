// The harness end to end: the real stack behind the edge, the console served at /, signing in and
// out at both widths, and registering through an invitation link.
import { checkoutEvent } from '@modelgate/testing/fake-stripe';
import { openBrowser, type ConsoleBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(60_000);

let stack: ConsoleStack;
let browser: ConsoleBrowser;

beforeAll(async () => {
  stack = await startConsoleStack();
  process.stderr.write(`[e2e] stack started in ${stack.startMs} ms\n`);
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe.each(['desktop', 'phone'] as const)('at %s width', (viewport) => {
  test('root signs in, sees the dashboard, and Sign out returns to the sign-in form', async () => {
    const page = await browser.newPage(viewport);
    await browser.signIn(page, stack, stack.root.username, stack.root.password);
    await expect(page.getByRole('heading', { name: 'Dashboard' }).isVisible()).resolves.toBe(true);

    await page.getByRole('button', { name: 'Sign out' }).click();

    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expect(page.getByLabel('Username').isVisible()).resolves.toBe(true);
    await browser.screenshot(page, 'sign-in');
    await page.context().close();
  });
});

test("a newcomer registers from root's invitation link with the code filled in and lands signed in", async () => {
  const affCode = await stack.api.call('get /api/user/aff');
  const page = await browser.newPage('desktop');
  await page.goto(`/register?aff=${affCode}`);

  await expect(page.getByLabel('Invitation code (optional)').inputValue()).resolves.toBe(affCode);
  await page.getByLabel('Username').fill('newcomer');
  await page.getByLabel('Password', { exact: true }).fill('newcomer-password');
  await page.getByRole('button', { name: 'Create account' }).click();

  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  const newcomer = await stack.prisma.user.findFirstOrThrow({ where: { username: 'newcomer' } });
  expect(newcomer.inviterId).toBeGreaterThan(0);
  await page.context().close();
});

test('the setup shortcuts: a channel and an option through /api as root, a signed Stripe event through the edge', async () => {
  const channel = await stack.createChannel({ name: 'fake OpenAI', type: 1, key: 'sk-fake', base_url: stack.upstream.url, models: 'gpt-4o-mini' });
  expect(channel).toMatchObject({ name: 'fake OpenAI', models: 'gpt-4o-mini' });
  await stack.setOption('StripeUnitPrice', '1.25');
  await expect(stack.prisma.option.findUniqueOrThrow({ where: { key: 'StripeUnitPrice' } })).resolves.toMatchObject({ value: '1.25' });

  const event = checkoutEvent({ type: 'checkout.session.expired' });
  const delivered = await stack.deliverStripeEvent(event.payload);
  expect(delivered.status).toBe(200);
  await expect(stack.prisma.paymentEvent.count({ where: { eventId: event.id } })).resolves.toBe(1);
});
