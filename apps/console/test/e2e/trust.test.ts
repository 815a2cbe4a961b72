// What the console does to keep secrets and sessions where they belong: a channel edit that moves
// its address asks for the key again, Sign out ends the session on the server, and `?next=` never
// sends anyone to another site after signing in.
import type { Page } from 'playwright-core';
import { type ConsoleBrowser, openBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(60_000);

const CHANNEL = 'proxied-upstream';
const KEY_HINT_REQUIRED = 'Required: the base URL or type changed, and the stored key is only ever sent to the address it was entered for.';
const KEY_HINT_KEPT = 'Never shown again. Leave empty to keep the stored key.';

let stack: ConsoleStack;
let browser: ConsoleBrowser;

beforeAll(async () => {
  stack = await startConsoleStack();
  browser = await openBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function signedInRootPage(): Promise<Page> {
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  return page;
}

test('editing a channel: a new base URL or type needs the key again, and the stored key never moves', async () => {
  const entered = `${stack.upstream.url.replace(/\/+$/, '')}/entered`;
  await stack.createChannel({ name: CHANNEL, type: 1, key: 'sk-entered-for-this-address', base_url: entered, models: 'e2e-model' });
  const before = await stack.prisma.channel.findFirstOrThrow({ where: { name: CHANNEL } });
  const page = await signedInRootPage();
  await page.goto('/admin/channels');
  await page.getByRole('button', { name: `Edit ${CHANNEL}` }).click();
  const key = page.getByLabel('Key', { exact: true });
  await page.getByText(KEY_HINT_KEPT).waitFor();
  await expect(key.getAttribute('aria-required')).resolves.toBe('false');

  await page.getByLabel('Base URL').fill('https://collector.example/v1');
  await page.getByText(KEY_HINT_REQUIRED).waitFor();
  await expect(key.getAttribute('aria-required')).resolves.toBe('true');
  await page.getByRole('button', { name: 'Save channel' }).click();
  await page.getByText('Enter the key for the new address').waitFor();
  await browser.screenshot(page, 'admin-channel-key-required');
  await expect(stack.prisma.channel.findFirstOrThrow({ where: { name: CHANNEL } })).resolves.toEqual(before);

  // Back to the stored address (with a trailing slash): the key may stay empty again.
  await page.getByLabel('Base URL').fill(`${entered}/`);
  await page.getByText(KEY_HINT_KEPT).waitFor();
  // Another type is another provider and another auth header: the key is needed too.
  await page.getByLabel('Type').selectOption({ label: 'Anthropic (14)' });
  await page.getByText(KEY_HINT_REQUIRED).waitFor();
  await page.getByLabel('Type').selectOption({ label: 'OpenAI-compatible (1)' });

  await page.getByLabel('Base URL').fill('https://other-proxy.example');
  await key.fill('sk-entered-for-the-other-proxy');
  await page.getByRole('button', { name: 'Save channel' }).click();
  await page.getByRole('status').filter({ hasText: `Channel ${CHANNEL} saved.` }).waitFor();
  const after = await stack.prisma.channel.findFirstOrThrow({ where: { name: CHANNEL } });
  expect(after.baseUrl).toBe('https://other-proxy.example');
  // Encrypted with a fresh IV on every write: a new ciphertext means the new key was sent and stored.
  expect(after.keyEnc).not.toBe(before.keyEnc);

  // The API holds the same rule for any client.
  await expect(stack.api.call('put /api/channel', { body: { id: after.id, base_url: 'https://collector.example' } })).rejects.toMatchObject({
    status: 400,
    code: 'invalid_request',
    message: expect.stringMatching(/^key: /),
  });
  await page.context().close();
});

test('Sign out ends the session on the server, not only in the page', async () => {
  const page = await signedInRootPage();
  const [session] = (await page.context().cookies()).filter((cookie) => cookie.name === 'session');
  if (!session) throw new Error('no session cookie after signing in');
  const rootId = (await stack.prisma.user.findFirstOrThrow({ where: { username: stack.root.username } })).id;
  const self = () => fetch(`${stack.baseUrl}/api/user/self`, { headers: { Cookie: `session=${session.value}`, 'New-Api-User': String(rootId) } });
  expect((await self()).status).toBe(200);
  // A GET, as a link or an image on another site would send, ends nothing.
  expect((await fetch(`${stack.baseUrl}/api/user/logout`, { headers: { Cookie: `session=${session.value}` } })).status).toBe(405);
  expect((await self()).status).toBe(200);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect((await self()).status).toBe(401);
  await page.context().close();
});

test.each([
  ['//evil.example/phish', '/'],
  ['/\\evil.example/phish', '/'],
  ['/.//evil.example', '/'],
  ['https://evil.example/', '/'],
  ['/keys', '/keys'],
])('signing in from /sign-in?next=%s lands on %s of this site', async (next, landing) => {
  const page = await browser.newPage('desktop');
  await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Username').fill(stack.root.username);
  await page.getByLabel('Password', { exact: true }).fill(stack.root.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === landing && url.origin === new URL(stack.baseUrl).origin);
  await page.getByRole('heading', { level: 1 }).waitFor();
  await page.context().close();
});
