/**
 * Chromium for the console's browser tests: Debian's /usr/bin/chromium driven by playwright-core
 * (never a downloaded browser), headless.
 *
 *   const browser = await openBrowser();                 // the last started stack's base URL
 *   const page = await browser.newPage('phone');         // 375x812 touch, or 'desktop' 1280x800
 *   await browser.signIn(page, stack, 'root', password); // waits for the dashboard
 *   await browser.screenshot(page, 'keys');              // apps/console/screenshots/keys-phone.png
 *   await browser.close();
 *
 * Browser console errors, uncaught page errors and failed /api requests are written to stderr as
 * they happen, so a failing step shows what the page saw.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { currentBaseUrl } from './stack';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(__dirname, '../../../screenshots');

export type Viewport = 'desktop' | 'phone';

const CONTEXTS = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
} as const;

export interface ConsoleBrowser {
  browser: Browser;
  /** A page in a fresh context (own cookies) at a desktop or phone viewport, its base URL the stack's edge. */
  newPage(viewport: Viewport): Promise<Page>;
  /** Opens /, signs in with the form and waits for the dashboard. */
  signIn(page: Page, stack: { baseUrl: string }, username: string, password: string): Promise<void>;
  /** A full-page PNG at apps/console/screenshots/<name>-<viewport>.png. */
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

function report(viewport: Viewport, line: string): void {
  process.stderr.write(`[browser ${viewport}] ${line}\n`);
}

/** Reports what goes wrong in the page as it happens (see the top of this file). */
function watchForProblems(page: Page, viewport: Viewport): void {
  page.on('console', (message) => {
    if (message.type() === 'error') report(viewport, `console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => report(viewport, `page error: ${error.message}`));
  page.on('requestfailed', (request) => report(viewport, `request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText ?? 'unknown'})`));
  page.on('response', (response) => {
    if (response.status() >= 400 && new URL(response.url()).pathname.startsWith('/api/')) {
      report(viewport, `${response.request().method()} ${new URL(response.url()).pathname} -> ${response.status()}`);
    }
  });
}

export async function openBrowser(options: { baseUrl?: string } = {}): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const viewports = new WeakMap<Page, Viewport>();
  return {
    browser,
    async newPage(viewport) {
      const context = await browser.newContext({ ...CONTEXTS[viewport], baseURL: options.baseUrl ?? currentBaseUrl(), locale: 'en-US' });
      const page = await context.newPage();
      viewports.set(page, viewport);
      watchForProblems(page, viewport);
      return page;
    },
    async signIn(page, stack, username, password) {
      await page.goto(`${stack.baseUrl}/`);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // The nav link is hidden behind the menu on phones: whichever is visible first.
      await page.getByRole('heading', { name: 'Dashboard' }).or(page.getByRole('link', { name: 'Dashboard' })).filter({ visible: true }).first().waitFor();
    },
    async screenshot(page, name) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${viewports.get(page) ?? 'desktop'}.png`), fullPage: true });
    },
    close: () => browser.close(),
  };
}
