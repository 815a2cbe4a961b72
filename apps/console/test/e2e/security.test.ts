// Security end to end: two-factor set up from the secret the page shows, signing in through the
// second step with a TOTP and with a backup code, fresh backup codes, turning it off, and a
// password change followed by signing in with the new password.
import type { Page } from 'playwright-core';
import speakeasy from 'speakeasy';
import { type ConsoleBrowser, openBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(120_000);

const STEP_SECONDS = 30;

let stack: ConsoleStack;
let browser: ConsoleBrowser;

beforeAll(async () => {
  stack = await startConsoleStack();
  await stack.api.call('post /api/user', { body: { username: 'alice', password: 'alice-password-1' } });
  await stack.api.call('post /api/user', { body: { username: 'bob', password: 'bob-password-1' } });
  browser = await openBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/**
 * TOTP codes as an authenticator app would give them, each for a later time step than the last one
 * used: the server accepts the current step +-1 and never a step it has seen (docs/api.md 3.2), so
 * a third code in a row waits for the next step.
 */
function authenticator(secret: string) {
  let lastStep = -1;
  return async function nextCode(): Promise<string> {
    for (;;) {
      const current = Math.floor(Date.now() / 1000 / STEP_SECONDS);
      const step = Math.max(lastStep + 1, current);
      if (step <= current + 1) {
        lastStep = step;
        return speakeasy.totp({ secret, encoding: 'base32', time: step * STEP_SECONDS });
      }
      await new Promise((resolve) => setTimeout(resolve, (step - 1) * STEP_SECONDS * 1000 - Date.now() + 100));
    }
  };
}

async function openSecurityPage(page: Page) {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('link', { name: 'Security' }).click();
  await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
}

async function backupCodes(page: Page): Promise<string[]> {
  const items = page.getByRole('list', { name: 'Backup codes' }).getByRole('listitem');
  await items.first().waitFor();
  const codes = await items.allTextContents();
  expect(codes).toHaveLength(4);
  return codes;
}

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
}

/** The password step (after signing out of the Security page), which asks for the second one. */
async function signInToSecondStep(page: Page, username: string, password: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Code', { exact: true }).waitFor();
}

async function verify(page: Page, code: string) {
  await page.getByLabel('Code', { exact: true }).fill(code);
  await page.getByRole('button', { name: 'Verify' }).click();
  // Back on the page that was open before signing out.
  await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
}

test('two-factor: set up from the page, sign in with a code and with a backup code, new backup codes, password change, turn off', async () => {
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, 'alice', 'alice-password-1');
  await openSecurityPage(page);
  await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();

  const qrCode = page.getByRole('img', { name: 'QR code for your authenticator app' });
  await qrCode.waitFor();
  await expect(qrCode.getAttribute('src')).resolves.toMatch(/^data:image\/png;base64,/);
  const secret = (await page.getByLabel('Secret', { exact: true }).textContent()) ?? '';
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  const firstCodes = await backupCodes(page);
  await expect(page.getByText('They are shown only now.').isVisible()).resolves.toBe(true);
  await browser.screenshot(page, 'security');

  const nextCode = authenticator(secret);
  await page.getByLabel('Code', { exact: true }).fill('000000');
  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByRole('alert').waitFor();
  await page.getByLabel('Code', { exact: true }).fill(await nextCode());
  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByText('Two-factor authentication is on.').waitFor();
  await expect(page.getByText('4 backup codes left.').isVisible()).resolves.toBe(true);
  const alice = await stack.prisma.user.findFirstOrThrow({ where: { username: 'alice' }, include: { twoFactor: true } });
  expect(alice.twoFactor?.enabled).toBe(true);

  // Signing in now takes a code from the app.
  await signOut(page);
  await signInToSecondStep(page, 'alice', 'alice-password-1');
  await verify(page, await nextCode());

  // New backup codes replace the first ones.
  await openSecurityPage(page);
  await page.getByLabel('Code for new backup codes').fill(await nextCode());
  await page.getByRole('button', { name: 'Regenerate backup codes' }).click();
  const newCodes = await backupCodes(page);
  expect(newCodes).not.toEqual(firstCodes);
  await page.getByRole('button', { name: 'I have saved them' }).click();

  // Password change: a wrong current password is refused, the right one works.
  await page.getByLabel('Current password').fill('not-my-password');
  await page.getByLabel('New password', { exact: true }).fill('alice-password-2');
  await page.getByLabel('Confirm new password').fill('alice-password-2');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.locator('.password-form').getByRole('alert').waitFor();
  await page.getByLabel('Current password').fill('alice-password-1');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Password changed.').waitFor();

  // The new password and a backup code (an old one no longer works).
  await signOut(page);
  await signInToSecondStep(page, 'alice', 'alice-password-2');
  await page.getByLabel('Code', { exact: true }).fill(firstCodes[0] ?? '');
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('alert').waitFor();
  await verify(page, newCodes[0] ?? '');

  // Turning it off takes a code (here a backup code) and a confirmation.
  await openSecurityPage(page);
  await expect(page.getByText('3 backup codes left.').isVisible()).resolves.toBe(true);
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByLabel('Code to disable').fill(newCodes[1] ?? '');
  await page.getByRole('button', { name: 'Disable two-factor authentication' }).click();
  await page.getByText('Two-factor authentication is off.').waitFor();
  await expect(page.getByRole('button', { name: 'Set up two-factor authentication' }).isVisible()).resolves.toBe(true);

  await signOut(page);
  await browser.signIn(page, stack, 'alice', 'alice-password-2');
  await page.context().close();
});

test('on a phone: the setup shows the QR code, the secret and the backup codes', async () => {
  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, 'bob', 'bob-password-1');
  await openSecurityPage(page);
  await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
  await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
  await expect(page.getByLabel('Secret', { exact: true }).isVisible()).resolves.toBe(true);
  await backupCodes(page);
  const width = await page.evaluate<number>('document.documentElement.scrollWidth');
  expect(width).toBeLessThanOrEqual(375);
  await browser.screenshot(page, 'security');
  await page.context().close();
});
