// The channel form for the cloud types (docs/api.md 2.12) as root uses it: Azure OpenAI with its
// required endpoint, AWS Bedrock with its required region, Google Vertex AI with a service account
// key file read in the browser; then the list, an edit that never shows the key, and a refusal of
// the service shown beside its field. Screenshots at desktop and phone width.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { type ConsoleBrowser, openBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(60_000);

const VERTEX_ACCOUNT = 'e2e-relay@e2e-project.iam.gserviceaccount.com';
/** What each channel is called and how the list labels its type. */
const CHANNELS = { azure: ['azure-e2e', 'Azure OpenAI'], bedrock: ['bedrock-e2e', 'AWS Bedrock'], vertex: ['vertex-e2e', 'Google Vertex AI'] } as const;

let stack: ConsoleStack;
let browser: ConsoleBrowser;
let page: Page;
let keyDir: string;
let keyFilePath: string;
let keyFile: Record<string, string>;

beforeAll(async () => {
  // A key file of the form Google issues: a real RSA key, a made-up account.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  keyFile = {
    type: 'service_account',
    project_id: 'e2e-project',
    private_key_id: '3f0c9a1e2d4b5c6a7f8e9d0c1b2a3f4e5d6c7b8a',
    private_key: privateKey,
    client_email: VERTEX_ACCOUNT,
    client_id: '104857600000000000001',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
  };
  keyDir = mkdtempSync(join(tmpdir(), 'console-e2e-'));
  keyFilePath = join(keyDir, 'e2e-project-3f0c9a1e2d4b.json');
  writeFileSync(keyFilePath, `${JSON.stringify(keyFile, null, 2)}\n`);

  stack = await startConsoleStack();
  browser = await openBrowser();
  page = await browser.newPage('desktop');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

async function openChannelForm(target: Page, type: string): Promise<void> {
  await target.goto('/admin/channels');
  await target.getByRole('heading', { level: 1 }).waitFor();
  await target.getByRole('button', { name: 'Add channel' }).click();
  await target.getByLabel('Type').selectOption({ label: type });
}

/** The text of the hint or error a field's aria-describedby names ('' when it names none). */
async function describedText(field: Locator, kind: 'hint' | 'error'): Promise<string> {
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ');
  const id = ids.find((candidate) => candidate.endsWith(`-${kind}`));
  return id === undefined ? '' : ((await field.page().locator(`[id="${id}"]`).textContent()) ?? '');
}

/**
 * Waits until the hint or error announced with a field (its aria-describedby) reads `expected`; an
 * error must also mark the field invalid.
 */
async function expectBeside(field: Locator, kind: 'hint' | 'error', expected: string | RegExp): Promise<void> {
  let seen = '';
  for (const started = Date.now(); Date.now() - started < 5000; await new Promise((resolve) => setTimeout(resolve, 50))) {
    seen = await describedText(field, kind);
    const marked = kind === 'hint' || (await field.getAttribute('aria-invalid')) === 'true';
    if (marked && (typeof expected === 'string' ? seen === expected : expected.test(seen))) return;
  }
  throw new Error(`the field's ${kind} reads ${JSON.stringify(seen)}, not ${String(expected)}`);
}

/** Records the channel saves the page sends, to show that a refused form sends none. */
function recordSaves(target: Page): string[] {
  const saves: string[] = [];
  target.on('request', (request) => {
    if (new URL(request.url()).pathname === '/api/channel' && request.method() !== 'GET') saves.push(request.method());
  });
  return saves;
}

test('an AWS Bedrock channel needs its region: the error is shown beside the field before anything is sent', async () => {
  const saves = recordSaves(page);
  await openChannelForm(page, 'AWS Bedrock (33)');
  // Exactly the type's settings.
  const region = page.getByLabel('Region');
  await expect(region.getAttribute('placeholder')).resolves.toBe('us-east-1');
  await expect(region.getAttribute('aria-required')).resolves.toBe('true');
  for (const other of ['API version', 'Project ID', 'Key file', 'Responses API']) await expect(page.getByLabel(other).count()).resolves.toBe(0);
  await expectBeside(page.getByLabel('Key', { exact: true }), 'hint', /^ACCESS_KEY_ID\|SECRET_ACCESS_KEY \(\|SESSION_TOKEN\), or a Bedrock API key\. /);
  await expectBeside(page.getByLabel('Base URL'), 'hint', 'Empty: https://bedrock-runtime.{region}.amazonaws.com');

  await page.getByLabel('Name').fill(CHANNELS.bedrock[0]);
  await page.getByLabel('Key', { exact: true }).fill('AKIAE2EEXAMPLE|e2e/secret+access+key');
  await page.getByLabel('Models').fill('us.anthropic.claude-sonnet-4-5-20250929-v1:0, amazon.nova-pro-v1:0');
  await page.getByRole('button', { name: 'Create channel' }).click();
  await expectBeside(region, 'error', 'AWS Bedrock channels need a region');
  expect(saves).toEqual([]);
  await browser.screenshot(page, 'admin-channel-bedrock-region');

  await region.fill('us-east-1');
  await expectBeside(page.getByLabel('Base URL'), 'hint', 'Empty: https://bedrock-runtime.us-east-1.amazonaws.com');
  await page.getByRole('button', { name: 'Create channel' }).click();
  await page.getByRole('status').filter({ hasText: `Channel ${CHANNELS.bedrock[0]} created.` }).waitFor();
});

test('an Azure OpenAI channel: its resource endpoint is required, the API version optional', async () => {
  await openChannelForm(page, 'Azure OpenAI (3)');
  const baseUrl = page.getByLabel('Base URL');
  await expect(baseUrl.getAttribute('placeholder')).resolves.toBe('https://<resource>.openai.azure.com');
  await expectBeside(baseUrl, 'hint', 'Required: the Azure OpenAI endpoint, e.g. https://<resource>.openai.azure.com');
  await expect(page.getByLabel('API version').getAttribute('placeholder')).resolves.toBe('2024-10-21');
  for (const other of ['Region', 'Project ID', 'Key file']) await expect(page.getByLabel(other).count()).resolves.toBe(0);

  await page.getByLabel('Name').fill(CHANNELS.azure[0]);
  await page.getByLabel('Key', { exact: true }).fill('0123456789abcdef0123456789abcdef');
  await page.getByLabel('Models').fill('gpt-4o-deployment');
  await page.getByLabel('API version').fill('latest');
  await page.getByRole('button', { name: 'Create channel' }).click();
  await expectBeside(baseUrl, 'error', 'Azure OpenAI channels need their endpoint here, e.g. https://<resource>.openai.azure.com');
  await expectBeside(page.getByLabel('API version'), 'error', 'must be an API version like 2024-10-21');

  await baseUrl.fill('https://e2e-resource.openai.azure.com/');
  await page.getByLabel('API version').fill('2025-04-01-preview');
  await page.getByRole('button', { name: 'Create channel' }).click();
  await page.getByRole('status').filter({ hasText: `Channel ${CHANNELS.azure[0]} created.` }).waitFor();
});

test('a Google Vertex AI channel: the service account key file is read in the browser into the key', async () => {
  await openChannelForm(page, 'Google Vertex AI (41)');
  const region = page.getByLabel('Region');
  await expect(region.getAttribute('placeholder')).resolves.toBe('global');
  await expect(region.getAttribute('aria-required')).resolves.toBe('false');
  await expect(page.getByLabel('Project ID').getAttribute('placeholder')).resolves.toBe('From the key file');
  await expectBeside(page.getByLabel('Base URL'), 'hint', 'Empty: https://aiplatform.googleapis.com');
  await expect(page.getByLabel('Key file').getAttribute('accept')).resolves.toBe('application/json,.json');

  // A pasted text that is not a key file is refused beside the key.
  await page.getByLabel('Name').fill(CHANNELS.vertex[0]);
  await page.getByLabel('Models').fill('gemini-2.5-flash, claude-sonnet-4-5@20250929');
  await page.getByLabel('Key', { exact: true }).fill('{"type": "service_account"}');
  await page.getByRole('button', { name: 'Create channel' }).click();
  await expectBeside(page.getByLabel('Key', { exact: true }), 'error', 'the key file lacks client_email, private_key, token_uri');

  await page.getByLabel('Key file').setInputFiles(keyFilePath);
  await expectBeside(page.getByLabel('Key file'), 'hint', `Key file of ${VERTEX_ACCOUNT} (project e2e-project).`);
  await expect(page.getByLabel('Key', { exact: true }).getAttribute('aria-invalid')).resolves.toBeNull();
  await expect(page.getByLabel('Project ID').getAttribute('placeholder')).resolves.toBe('e2e-project');
  await region.fill('us-central1');
  await expectBeside(page.getByLabel('Base URL'), 'hint', 'Empty: https://us-central1-aiplatform.googleapis.com');
  await browser.screenshot(page, 'admin-channel-vertex');

  const sent = page.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/api/channel');
  await page.getByRole('button', { name: 'Create channel' }).click();
  const body = (await sent).postDataJSON() as { type: number; key: string; settings: unknown };
  expect(body).toMatchObject({ type: 41, base_url: '', settings: { region: 'us-central1' } });
  expect(JSON.parse(body.key)).toEqual(keyFile);
  await page.getByRole('status').filter({ hasText: `Channel ${CHANNELS.vertex[0]} created.` }).waitFor();
});

test('the list shows each channel with its type label; the settings are stored and the keys never shown', async () => {
  await page.goto('/admin/channels');
  for (const [name, label] of Object.values(CHANNELS)) {
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
    await row.getByRole('cell', { name: label, exact: true }).waitFor();
  }
  const { items } = await stack.api.call('get /api/channel');
  const byName = new Map(items.map((channel) => [channel.name, channel]));
  expect(byName.get(CHANNELS.azure[0])).toMatchObject({ type: 3, base_url: 'https://e2e-resource.openai.azure.com', settings: { api_version: '2025-04-01-preview' } });
  expect(byName.get(CHANNELS.bedrock[0])).toMatchObject({ type: 33, base_url: '', settings: { region: 'us-east-1' } });
  expect(byName.get(CHANNELS.vertex[0])).toMatchObject({ type: 41, base_url: '', settings: { region: 'us-central1' } });
  await browser.screenshot(page, 'admin-channels-cloud');

  // Editing shows the stored settings, never the key.
  await page.getByRole('button', { name: `Edit ${CHANNELS.vertex[0]}` }).click();
  await expect(page.getByLabel('Key', { exact: true }).inputValue()).resolves.toBe('');
  await expect(page.getByLabel('Region').inputValue()).resolves.toBe('us-central1');
  await expectBeside(page.getByLabel('Key file'), 'hint', /read here in the browser/);
  await page.getByRole('button', { name: 'Cancel' }).click();
});

test("the service's refusal naming a field is shown beside that field, which gets the focus", async () => {
  // Every refusal the service makes, the form makes first: this one is answered by the page's network layer.
  await page.route('**/api/channel', (route) =>
    route.request().method() === 'PUT'
      ? route.fulfill({
          status: 400,
          contentType: 'application/json; charset=utf-8',
          body: JSON.stringify({ success: false, message: 'settings.region: must be a region name like us-east-1 or europe-west4', code: 'invalid_request' }),
        })
      : route.fallback());
  await page.getByRole('button', { name: `Edit ${CHANNELS.bedrock[0]}` }).click();
  const region = page.getByLabel('Region');
  await expect(region.inputValue()).resolves.toBe('us-east-1');
  await page.getByRole('button', { name: 'Save channel' }).click();
  await expectBeside(region, 'error', 'must be a region name like us-east-1 or europe-west4');
  await expect(page.evaluate<string | undefined>('document.activeElement?.id')).resolves.toBe(await region.getAttribute('id'));
  await expect(page.getByRole('alert').count()).resolves.toBe(0);
  await page.unroute('**/api/channel');
  await page.getByRole('button', { name: 'Save channel' }).click();
  await page.getByRole('status').filter({ hasText: `Channel ${CHANNELS.bedrock[0]} saved.` }).waitFor();
});

test('at phone width the form fits the screen for every cloud type', async () => {
  const phone = await browser.newPage('phone');
  const fitsTheScreen = () => expect(phone.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(375);
  await browser.signIn(phone, stack, stack.root.username, stack.root.password);
  await openChannelForm(phone, 'Google Vertex AI (41)');
  await phone.getByLabel('Key file').setInputFiles(keyFilePath);
  await phone.getByText(`Key file of ${VERTEX_ACCOUNT}`).waitFor();
  await fitsTheScreen();
  await browser.screenshot(phone, 'admin-channel-vertex');
  await phone.getByLabel('Type').selectOption({ label: 'AWS Bedrock (33)' });
  await phone.getByRole('button', { name: 'Create channel' }).click();
  await expectBeside(phone.getByLabel('Region'), 'error', 'AWS Bedrock channels need a region');
  await fitsTheScreen();
  await browser.screenshot(phone, 'admin-channel-bedrock-region');
  await phone.getByLabel('Type').selectOption({ label: 'Azure OpenAI (3)' });
  await expectBeside(phone.getByLabel('Base URL'), 'hint', 'Required: the Azure OpenAI endpoint, e.g. https://<resource>.openai.azure.com');
  await fitsTheScreen();
  await browser.screenshot(phone, 'admin-channel-azure');
  await phone.context().close();
});
