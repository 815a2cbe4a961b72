// Mail end to end, through the real stack and a real SMTP server: a forgotten password reset from
// the sign-in page with the link from the mail, and a registration with the mailed code while the
// gateway verifies emails.
import type { Page } from 'playwright-core';
import type { ReceivedMail } from '@modelgate/testing/smtp-sink';
import { type SmtpSink, startSmtpSink } from '@modelgate/testing/smtp-sink';
import { type ConsoleBrowser, openBrowser, type Viewport } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(120_000);

let stack: ConsoleStack;
let sink: SmtpSink;
let browser: ConsoleBrowser;
const seen = new Set<ReceivedMail>();

/** The next mail to `to` this file has not read yet. */
async function nextMailTo(to: string): Promise<ReceivedMail> {
  const mail = await sink.waitForMail((candidate) => !seen.has(candidate) && candidate.to.includes(to), 30_000);
  seen.add(mail);
  return mail;
}

async function waitForDashboard(page: Page): Promise<void> {
  // The nav link is hidden behind the menu on phones: whichever is visible first.
  await page.getByRole('heading', { name: 'Dashboard' }).or(page.getByRole('link', { name: 'Dashboard' })).filter({ visible: true }).first().waitFor();
}

beforeAll(async () => {
  [stack, sink] = await Promise.all([startConsoleStack(), startSmtpSink()]);
  await stack.setOption('SMTPServer', sink.host);
  await stack.setOption('SMTPPort', sink.port);
  await stack.setOption('SMTPFrom', 'noreply@gateway.example.com');
  // Links in mails start with the public address: here, the test's edge.
  await stack.setOption('ServerAddress', stack.baseUrl);
  const alice = await stack.api.call('post /api/user', { body: { username: 'alice', password: 'alice-password-0' } });
  await stack.api.call('put /api/user', { body: { id: alice.id, email: 'alice@example.com' } });
  browser = await openBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await sink?.stop();
});

describe.each<[Viewport, string]>([
  ['desktop', 'alice-new-password-1'],
  ['phone', 'alice-new-password-2'],
])('forgotten password (%s)', (viewport, newPassword) => {
  it('from "Forgot password?" on the sign-in page to signing in with the password set through the mailed link', async () => {
    const page = await browser.newPage(viewport);
    await page.goto('/sign-in');
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await page.getByLabel('Email').fill('alice@example.com');
    await browser.screenshot(page, 'forgot-password');
    await page.getByRole('button', { name: 'Send link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account has the address alice@example.com, a link' }).waitFor();
    await browser.screenshot(page, 'forgot-password-sent');

    const mail = await nextMailTo('alice@example.com');
    expect(mail.subject).toBe('Reset your Modelgate password');
    const [link = ''] = mail.text.match(/https?:\/\/\S+/g) ?? [];
    expect(link.startsWith(`${stack.baseUrl}/reset?`)).toBe(true);

    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel('New password', { exact: true }).fill(newPassword);
    await page.getByLabel('New password again').fill(`${newPassword}-typo`);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('The passwords do not match').waitFor();
    await page.getByLabel('New password again').fill(newPassword);
    await browser.screenshot(page, 'reset-password');
    await page.getByRole('button', { name: 'Set password' }).click();

    await page.getByRole('status').filter({ hasText: 'Your password was changed' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await browser.screenshot(page, 'sign-in-after-reset');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill(newPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await waitForDashboard(page);

    // The link worked once.
    await page.context().clearCookies();
    await page.goto(link);
    await page.getByLabel('New password', { exact: true }).fill('never-set-password');
    await page.getByLabel('New password again').fill('never-set-password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong, expired or already used' }).waitFor();
    await page.context().close();
  });
});

it('registers with the code mailed to the address while the gateway verifies emails', async () => {
  await stack.setOption('EmailVerificationEnabled', true);
  for (const viewport of ['phone', 'desktop'] as const) {
    const page = await browser.newPage(viewport);
    const username = `bob_${viewport}`;
    const email = `${username}@example.com`;
    await page.goto('/register');
    await page.getByRole('button', { name: 'Send code' }).waitFor();
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill('bob-password-1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Enter your email: the code is mailed there').waitFor();

    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByRole('status').filter({ hasText: `A code is on its way to ${email}` }).waitFor();
    const mail = await nextMailTo(email);
    const code = /\b(\d{6})\b/.exec(mail.text)?.[1] ?? '';
    await page.getByLabel('Verification code').fill(code);
    await browser.screenshot(page, 'register-verification');
    await page.getByRole('button', { name: 'Create account' }).click();
    await waitForDashboard(page);
    await page.context().close();
  }
});
