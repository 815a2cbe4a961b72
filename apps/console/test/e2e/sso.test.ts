// Single sign-on end to end: "Sign in with SSO" on the sign-in page, the identity provider's own
// sign-in page (a real OpenID Connect provider on a loopback port), and back on the console signed
// in; the two-factor step after it; a failed sign-in explained on /login.
import { startTestIdentityProvider, type TestIdentityProvider } from '@modelgate/testing/oidc-provider';
import type { Page } from 'playwright-core';
import speakeasy from 'speakeasy';
import { type ConsoleBrowser, openBrowser } from './support/browser';
import { type ConsoleStack, signedInClient, startConsoleStack } from './support/stack';

jest.setTimeout(90_000);

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let idp: TestIdentityProvider;

beforeAll(async () => {
  stack = await startConsoleStack();
  // Links for browsers start with ServerAddress: here the edge the browser talks to.
  idp = await startTestIdentityProvider({ redirectUri: `${stack.baseUrl}/api/oauth/oidc/callback` });
  for (const [key, value] of Object.entries({
    ServerAddress: stack.baseUrl,
    QuotaForNewUser: 250_000,
    OIDCEnabled: true,
    OIDCIssuer: idp.issuer,
    OIDCClientId: idp.clientId,
    OIDCClientSecret: idp.clientSecret,
  })) await stack.setOption(key, value);
  idp.accounts.set('sub-alice', { preferred_username: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice Liddell' });
  idp.accounts.set('sub-bob', { preferred_username: 'bob.builder@example.com', name: 'Bob Builder' });
  browser = await openBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await stack?.stop();
});

/** From the sign-in page through the provider's page; the console is loading whatever comes next. */
async function signInWithSso(page: Page, login: string): Promise<void> {
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await page.getByRole('heading', { name: 'Test identity provider' }).waitFor();
  expect(new URL(page.url()).origin).toBe(idp.issuer);
  await page.getByLabel('Username').fill(login);
  await page.getByLabel('Password').fill('whatever the provider wants');
  await browser.screenshot(page, 'sso-provider');
  await page.getByRole('button', { name: 'Continue' }).click();
}

async function waitForDashboard(page: Page): Promise<void> {
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
}

/** Whom the page's session cookie signs in, asked as the console asks it. */
function signedInAs(page: Page): Promise<unknown> {
  return page.evaluate(async () => ((await (await fetch('/api/user/session')).json()) as { data: unknown }).data);
}

describe.each(['desktop', 'phone'] as const)('at %s width', (viewport) => {
  const sub = viewport === 'desktop' ? 'sub-alice' : 'sub-bob';
  const username = viewport === 'desktop' ? 'alice' : 'bob_builder';

  test('"Sign in with SSO" leads through the provider to the dashboard, signed in; a second time finds the same user', async () => {
    const page = await browser.newPage(viewport);
    await page.goto('/');
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    await browser.screenshot(page, 'sso-sign-in');
    await signInWithSso(page, sub);
    await waitForDashboard(page);
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(signedInAs(page)).resolves.toEqual({ id: expect.any(Number), username, role: 1 });
    await browser.screenshot(page, 'sso-dashboard');

    const user = await stack.prisma.user.findFirstOrThrow({ where: { identities: { some: { subject: sub } } } });
    expect(user.quota).toBe(250_000n);
    // A reload keeps the session: the page asks the cookie who is signed in.
    await page.reload();
    await waitForDashboard(page);

    // Signed out of the console, still signed in at the provider: SSO comes straight back.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await waitForDashboard(page);
    await expect(signedInAs(page)).resolves.toEqual({ id: user.id, username, role: 1 });
    await expect(stack.prisma.user.count({ where: { identities: { some: { subject: sub } } } })).resolves.toBe(1);
    await page.context().close();
  });

  test('a failed sign-in lands on /login with a readable message', async () => {
    const page = await browser.newPage(viewport);
    await page.goto('/login?error=invalid_state');
    await page.getByText('That sign-in expired or was started in another browser. Start it again here.').waitFor();
    await browser.screenshot(page, 'sso-error');
    // Cancelling at the provider comes back the same way.
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('Single sign-on was cancelled at the identity provider.').waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.context().close();
  });
});

test('a user with two-factor on gives a code after the provider, then lands where it was going', async () => {
  await stack.api.call('post /api/user', { body: { username: 'carol', password: 'carol-password-1' } });
  const carol = await stack.prisma.user.findFirstOrThrow({ where: { username: 'carol' } });
  await stack.prisma.userIdentity.create({ data: { userId: carol.id, issuer: idp.issuer, subject: 'sub-carol' } });
  idp.accounts.set('sub-carol', { preferred_username: 'carol' });
  const carolApi = await signedInClient(stack.baseUrl, 'carol', 'carol-password-1');
  const { secret } = await carolApi.call('post /api/user/2fa/setup', { body: {} });
  const totp = (offsetSteps: number) => speakeasy.totp({ secret, encoding: 'base32', time: Date.now() / 1000 + offsetSteps * 30 });
  await carolApi.call('post /api/user/2fa/enable', { body: { code: totp(-1) } });

  const page = await browser.newPage('desktop');
  await page.goto('/usage');
  await signInWithSso(page, 'sub-carol');
  await page.getByRole('heading', { name: 'Two-factor check' }).waitFor();
  await browser.screenshot(page, 'sso-two-factor');
  await page.getByLabel('Code', { exact: true }).fill(totp(0));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
  await page.context().close();
});
