// Quick start and API reference: a newcomer's checklist that follows what is set up, snippets with
// this gateway's URLs and a priced model, and the OpenAPI document rendered in the browser.
import { openBrowser, type ConsoleBrowser } from './support/browser';
import { type ConsoleStack, startConsoleStack } from './support/stack';

jest.setTimeout(90_000);

let stack: ConsoleStack;
let browser: ConsoleBrowser;

beforeAll(async () => {
  stack = await startConsoleStack();
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

test('Quick start ticks off the channel and the key as they are made, and its snippets call this gateway', async () => {
  const page = await browser.newPage('desktop');
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Quick start' }).click();
  await page.getByRole('heading', { name: 'Quick start' }).waitFor();

  const steps = page.getByRole('region', { name: 'Steps' }).getByRole('listitem');
  const step = (name: string, state: 'To do' | 'Done') => steps.filter({ hasText: name }).getByText(state, { exact: true });
  await step('Add a channel', 'To do').waitFor();
  await step('Create an API key', 'To do').waitFor();

  await stack.createChannel({ name: 'fake openai', type: 1, key: 'sk-upstream', base_url: stack.upstream.url, models: 'gpt-4o-mini' });
  await stack.api.call('post /api/token', { body: { name: 'ci' } });
  await page.reload();
  await step('Add a channel', 'Done').waitFor();
  await step('Create an API key', 'Done').waitFor();

  // The shipped prices cover gpt-4o-mini: the snippets use it by default, with this origin.
  await expect(page.getByLabel('Model', { exact: true }).inputValue()).resolves.toBe('gpt-4o-mini');
  const curl = await page.getByRole('region', { name: 'curl', exact: true }).locator('pre').innerText();
  expect(curl).toContain(`curl ${stack.baseUrl}/v1/chat/completions`);
  expect(curl).toContain('"model":"gpt-4o-mini"');
  const claudeCode = await page.getByRole('region', { name: 'Claude Code' }).locator('pre').innerText();
  expect(claudeCode).toContain(`ANTHROPIC_BASE_URL=${stack.baseUrl}\n`);
  const models = page.getByRole('region', { name: 'Model prices' });
  await expect(models.getByRole('row', { name: /^gpt-4o-mini \$/ }).innerText()).resolves.toContain('$0.15');
  // The per-unit prices, with their unit.
  await expect(models.getByRole('row', { name: /^dall-e-3 / }).innerText()).resolves.toBe('dall-e-3\t$0.04\timage');
  await expect(models.getByRole('row', { name: /^whisper-1 / }).innerText()).resolves.toBe('whisper-1\t$0.006\tminute');

  // Images and audio: shipped priced models by default, with this origin; another image model changes the snippets.
  const snippet = (name: string) => page.getByRole('region', { name, exact: true }).locator('pre').innerText();
  await expect(page.getByLabel('Image model').inputValue()).resolves.toBe('gpt-image-1');
  await expect(page.getByLabel('Transcription model').inputValue()).resolves.toBe('whisper-1');
  const imageCurl = await snippet('Image generation: curl');
  expect(imageCurl).toContain(`curl ${stack.baseUrl}/v1/images/generations`);
  expect(imageCurl).toContain('"model":"gpt-image-1"');
  expect(imageCurl).not.toContain('response_format');
  await expect(snippet('Image generation: OpenAI SDK (TypeScript)')).resolves.toContain(`baseURL: '${stack.baseUrl}/v1'`);
  const transcriptionCurl = await snippet('Transcription: curl');
  expect(transcriptionCurl).toContain(`curl ${stack.baseUrl}/v1/audio/transcriptions`);
  expect(transcriptionCurl).toContain('-F model=whisper-1');
  await expect(snippet('Transcription: OpenAI SDK (Python)')).resolves.toContain('client.audio.transcriptions.create(model="whisper-1", file=audio)');
  await page.getByLabel('Image model').selectOption('dall-e-3');
  await expect(snippet('Image generation: OpenAI SDK (Python)')).resolves.toContain('response_format="b64_json"');
  await page.getByLabel('Transcription model').selectOption('gpt-4o-mini-transcribe');
  await expect(snippet('Transcription: curl')).resolves.toContain('-F model=gpt-4o-mini-transcribe');
  await browser.screenshot(page, 'quick-start');
  await page.context().close();
});

test('a plain user sees only the steps that are theirs', async () => {
  await stack.api.call('post /api/user', { body: { username: 'reader', password: 'reader-password' } });
  const page = await browser.newPage('phone');
  await browser.signIn(page, stack, 'reader', 'reader-password');
  await page.goto('/quick-start');
  await page.getByRole('heading', { name: 'Quick start' }).waitFor();
  const steps = page.getByRole('region', { name: 'Steps' }).getByRole('listitem');
  await steps.getByText('To do', { exact: true }).first().waitFor();
  await expect(steps.allInnerTexts()).resolves.toEqual([expect.stringContaining('Create an API key'), expect.stringContaining('Call the gateway')]);
  await browser.screenshot(page, 'quick-start');
  await page.context().close();
});

test.each(['desktop', 'phone'] as const)('the API reference renders the OpenAPI document at %s width', async (viewport) => {
  const page = await browser.newPage(viewport);
  await browser.signIn(page, stack, stack.root.username, stack.root.password);
  await page.goto('/docs');
  await page.getByRole('heading', { name: 'API reference' }).waitFor();
  // Scalar renders each operation's summary from the document generated from the schemas.
  await page.getByRole('heading', { name: 'Modelgate API' }).waitFor({ timeout: 30_000 });
  // Operations render as they scroll into view; the first is GET /api/status. The navigation lists
  // every operation, the relay's included (on phones it is folded away, hence attached, not visible).
  await page.getByRole('heading', { name: 'Public settings a client needs before logging in' }).waitFor();
  await page.getByText('OpenAI chat completion').first().waitFor({ state: 'attached' });
  await browser.screenshot(page, 'api-reference', { fullPage: false });
  await page.context().close();
});
