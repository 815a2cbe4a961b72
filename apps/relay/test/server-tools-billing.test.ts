// docs/api.md 2.14 and 2.11: server tools the provider runs (Anthropic web search, OpenAI web search
// calls, Gemini grounding) are charged per reported call at ToolPrice; a request offering one
// without a price is refused before any upstream call; a prompt above a long-context threshold is
// priced whole at the tier's ratios.
import { consumeContentOf } from '@modelgate/schemas';
import { createChannel, setOption } from '@modelgate/testing';
import { settledConsumeRow, settledConsumeRows } from './chat-support';
import { createCustomer, eventually, expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';

const CLAUDE = 'claude-sonnet-4-5';
const GPT = 'gpt-5';
const GEMINI_MODEL = 'gemini-2.5-flash';
/** docs/api.md 2.5: quota per USD. */
const QUOTA_PER_UNIT = 500_000;
const WEB_SEARCH_USD = 0.01;
const GROUNDING_USD = 0.035;
const START_QUOTA = 10_000_000;

relaySuite();

beforeEach(async () => {
  await resetSuite();
  // Unit prices: 1 quota per prompt and per completion token, so the tools' share stands out.
  const unit = { [CLAUDE]: 1, [GPT]: 1, [GEMINI_MODEL]: 1 };
  await setOption(harness.prisma, 'ModelRatio', unit);
  await setOption(harness.prisma, 'CompletionRatio', unit);
  await setOption(harness.prisma, 'CacheRatio', unit);
  await setOption(harness.prisma, 'CacheCreationRatio', unit);
  await setOption(harness.prisma, 'ToolPrice', { web_search: WEB_SEARCH_USD, googleSearch: GROUNDING_USD });
  await createChannel(harness.prisma, { type: 14, baseUrl: upstream.url, models: CLAUDE, key: 'sk-ant-upstream-secret' });
  await createChannel(harness.prisma, { type: 1, baseUrl: upstream.url, models: GPT, key: 'sk-upstream-openai-secret' });
  await createChannel(harness.prisma, { type: 24, baseUrl: upstream.url, models: GEMINI_MODEL, key: 'gemini-upstream-secret' });
  await harness.reloadCaches();
});

async function post(path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${harness.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

const anthropicHeaders = (key: string) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const WEB_SEARCH_TOOL = { type: 'web_search_20250305', name: 'web_search', max_uses: 5 };

/**
 * The call's one consume row charged its tokens at unit prices plus `calls` of `tool` at `usdEach`
 * (docs/api.md 2.14: round(USD x calls x GroupRatio x QuotaPerUnit)), shown in `other` and content.
 */
async function expectToolCharge(userId: number, tool: string, calls: number, usdEach: number): Promise<void> {
  const row = await settledConsumeRow(harness);
  const toolQuota = Math.round(usdEach * calls * QUOTA_PER_UNIT);
  expect(row.quota).toBe(BigInt(-(row.promptTokens + row.completionTokens + toolQuota)));
  expect(row.other).toMatchObject({ server_tools: { [tool]: { count: calls, usd_each: usdEach, quota: toolQuota } } });
  expect(consumeContentOf(row.other as Record<string, unknown>)).toContain(`${tool} ${calls} x USD ${usdEach} = ${toolQuota}`);
  const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  expect(user.quota).toBe(BigInt(START_QUOTA) + row.quota);
  await expectLedgerInvariant(harness.prisma);
}

describe('server tool calls are charged at ToolPrice', () => {
  it.each([false, true])('Anthropic usage.server_tool_use.web_search_requests (stream: %s)', async (stream) => {
    upstream.setMode('ok', { serverToolCalls: 2 });
    const { userId, key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const { status } = await post('/v1/messages', anthropicHeaders(key), {
      model: CLAUDE,
      max_tokens: 100,
      stream,
      tools: [WEB_SEARCH_TOOL],
      messages: [{ role: 'user', content: 'what happened today' }],
    });
    expect(status).toBe(200);
    // 2 searches at USD 0.01: 10,000 quota on top of the tokens.
    await expectToolCharge(userId, 'web_search', 2, WEB_SEARCH_USD);
  });

  it.each([false, true])('OpenAI Responses: each web_search_call output item (stream: %s)', async (stream) => {
    upstream.setMode('ok', { serverToolCalls: 3 });
    const { userId, key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const { status, text } = await post('/v1/responses', bearer(key), { model: GPT, stream, tools: [{ type: 'web_search' }], input: 'what happened today' });
    expect(status).toBe(200);
    expect(text).toContain('web_search_call');
    await expectToolCharge(userId, 'web_search', 3, WEB_SEARCH_USD);
  });

  it.each([false, true])('Gemini grounding with Google Search: one grounded prompt whatever its queries (stream: %s)', async (stream) => {
    upstream.setMode('ok', { serverToolCalls: 3 });
    const { userId, key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const { status, text } = await post(`/v1beta/models/${GEMINI_MODEL}:${method}`, { 'x-goog-api-key': key }, {
      contents: [{ role: 'user', parts: [{ text: 'what happened today' }] }],
      tools: [{ googleSearch: {} }],
    });
    expect(status).toBe(200);
    expect(text).toContain('groundingMetadata');
    await expectToolCharge(userId, 'googleSearch', 1, GROUNDING_USD);
  });
});

describe('a stream its client leaves after a search and before any text', () => {
  it('is charged the search the provider ran (and the prompt), never released as free', async () => {
    upstream.setMode('slowDrip', { serverToolCalls: 1, chunkDelayMs: 300 });
    const { userId, key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const controller = new AbortController();
    const response = await fetch(`${harness.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(key) },
      body: JSON.stringify({ model: GPT, stream: true, tools: [{ type: 'web_search' }], input: 'what happened today' }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('"web_search_call"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended before its web_search_call');
      received += decoder.decode(value, { stream: true });
    }
    expect(received).not.toContain('response.output_text.delta');
    controller.abort();
    await reader.cancel().catch(() => undefined);

    const row = await eventually(() => settledConsumeRow(harness));
    expect(row.completionTokens).toBe(0);
    await expectToolCharge(userId, 'web_search', 1, WEB_SEARCH_USD);
  });
});

describe('a request offering a server tool without a price is refused before any upstream call', () => {
  it('Anthropic: 400 in Anthropic shape naming the tool', async () => {
    const { key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const { status, text } = await post('/v1/messages', anthropicHeaders(key), {
      model: CLAUDE,
      max_tokens: 100,
      tools: [{ name: 'get_weather', input_schema: { type: 'object' } }, { type: 'code_execution_20250825', name: 'code_execution' }],
      messages: [{ role: 'user', content: 'run this' }],
    });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('server tool code_execution has no price') } });
    expect(upstream.requests).toHaveLength(0);
  });

  it('OpenAI Responses: 400 model_price_error with param naming the tool field', async () => {
    const { key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const { status, text } = await post('/v1/responses', bearer(key), { model: GPT, tools: [{ type: 'web_search' }, { type: 'code_interpreter', container: { type: 'auto' } }], input: 'run this' });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'model_price_error', param: 'tools.1.type', message: expect.stringContaining('server tool code_interpreter has no price') } });
    expect(upstream.requests).toHaveLength(0);
  });

  it('OpenAI chat web_search_options: 400 naming the field', async () => {
    const { key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const { status, text } = await post('/v1/chat/completions', bearer(key), { model: GPT, web_search_options: {}, messages: [{ role: 'user', content: 'news' }] });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'model_price_error', param: 'web_search_options', message: expect.stringContaining('web_search_preview') } });
    expect(upstream.requests).toHaveLength(0);
  });

  it('Gemini: 400 INVALID_ARGUMENT naming the tool', async () => {
    const { key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const { status, text } = await post(`/v1beta/models/${GEMINI_MODEL}:generateContent`, { 'x-goog-api-key': key }, {
      contents: [{ role: 'user', parts: [{ text: 'where to eat' }] }],
      tools: [{ google_maps: {} }],
    });
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('server tool googleMaps has no price') } });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('long-context tiers (ModelRatioTiers)', () => {
  const TIER = { above_prompt_tokens: 200_000, model_ratio: 3, completion_ratio: 3.75 };

  beforeEach(async () => {
    // Claude Sonnet 4.5's prices: USD 3 / 15 per 1M tokens, USD 6 / 22.50 above 200K prompt tokens.
    await setOption(harness.prisma, 'ModelRatio', { [CLAUDE]: 1.5 });
    await setOption(harness.prisma, 'CompletionRatio', { [CLAUDE]: 5 });
    await setOption(harness.prisma, 'ModelRatioTiers', { [CLAUDE]: [TIER] });
    await harness.reloadCaches();
  });

  async function call(words: number) {
    const { key } = await createCustomer(harness.prisma, { quota: START_QUOTA });
    const { status } = await post('/v1/messages', anthropicHeaders(key), { model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: 'w '.repeat(words) }] });
    expect(status).toBe(200);
  }

  it('prices the whole call at the tier when the reported prompt exceeds the threshold, at the base ratios up to it', async () => {
    await call(200_000);
    await call(210_000);
    const [atThreshold, above] = await settledConsumeRows(harness);
    // The fake counts one token a word, and answers 5 completion tokens.
    expect([atThreshold?.promptTokens, above?.promptTokens]).toEqual([200_000, 210_000]);
    expect(atThreshold?.quota).toBe(BigInt(-Math.round((200_000 + 5 * 5) * 1.5)));
    expect(atThreshold?.other).toMatchObject({ model_ratio: 1.5, completion_ratio: 5 });
    expect(atThreshold?.other).not.toHaveProperty('tier_above_prompt_tokens');

    expect(above?.quota).toBe(BigInt(-Math.round((210_000 + 5 * 3.75) * 3)));
    expect(above?.other).toMatchObject({ model_ratio: 3, completion_ratio: 3.75, tier_above_prompt_tokens: 200_000 });
    expect(consumeContentOf(above?.other as Record<string, unknown>)).toContain('long-context tier above 200000 prompt tokens');
    await expectLedgerInvariant(harness.prisma);
  });
});
