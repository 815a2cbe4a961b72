// docs/api.md 2.5, 2.10 and 2.11: a Responses call reserves its estimate (input items by size,
// max_output_tokens) and is charged by the usage its response reports, cached and cache-write
// tokens priced apart, every count on the consume row.
import { setOption } from '@modelgate/testing';
import OpenAI from 'openai';
import { CHAT_MODELS, expectChargedRow } from './chat-support';
import { createCustomer, harness, openAiClient, relaySuite, resetSuite, upstream } from './harness';
import { named, NATIVE, respond, type ResponsesRoute, VIA_ANTHROPIC, VIA_GEMINI, withRoute } from './responses-support';

/** Six words: the fakes' uncached input tokens. */
const INPUT = 'Summarise the long document above please';
const MODEL_RATIO = 2;
const COMPLETION_RATIO = 3;

interface Case {
  route: ResponsesRoute;
  cache: { cachedTokens: number; cacheWriteTokens: number };
  reasoning: boolean;
  input: number;
  output: number;
  cached: number;
  written: number;
  reasoningTokens: number;
  cacheRatio: number;
  cacheCreationRatio: number;
  quota: number;
}

const CASES: [string, Case][] = [
  [
    // ((906 - 800 - 100) + 800 x 0.5 + 100 x 1.5 + 8 x 3) x 2 = (6 + 400 + 150 + 24) x 2 = 1160
    'natively on OpenAI: input_tokens_details cached_tokens and cache_write_tokens, output_tokens_details.reasoning_tokens',
    { route: NATIVE, cache: { cachedTokens: 800, cacheWriteTokens: 100 }, reasoning: true, input: 906, output: 8, cached: 800, written: 100, reasoningTokens: 3, cacheRatio: 0.5, cacheCreationRatio: 1.5, quota: 1160 },
  ],
  [
    // ((956 - 800 - 150) + 800 x 0.1 + 150 x 2 + 5 x 3) x 2 = (6 + 80 + 300 + 15) x 2 = 802
    'translated from Anthropic: cache reads and writes in input_tokens',
    { route: VIA_ANTHROPIC, cache: { cachedTokens: 800, cacheWriteTokens: 150 }, reasoning: false, input: 956, output: 5, cached: 800, written: 150, reasoningTokens: 0, cacheRatio: 0.1, cacheCreationRatio: 2, quota: 802 },
  ],
  [
    // ((606 - 600) + 600 x 0.25 + 8 x 3) x 2 = (6 + 150 + 24) x 2 = 360
    'translated from Gemini: cachedContentTokenCount and thoughtsTokenCount',
    { route: VIA_GEMINI, cache: { cachedTokens: 600, cacheWriteTokens: 0 }, reasoning: true, input: 606, output: 8, cached: 600, written: 0, reasoningTokens: 3, cacheRatio: 0.25, cacheCreationRatio: 1, quota: 360 },
  ],
];

relaySuite();

beforeEach(async () => {
  await resetSuite();
});

describe.each(CASES)('%s', (_name, expected) => {
  it.each([['plain', false], ['streaming', true]])('%s: usage in the response as charged by the 2.11 formula, every count on the consume row', async (_mode, stream) => {
    const model = await withRoute(expected.route);
    const each = (value: number) => Object.fromEntries(CHAT_MODELS.map((name) => [name, value]));
    await setOption(harness.prisma, 'ModelRatio', each(MODEL_RATIO));
    await setOption(harness.prisma, 'CompletionRatio', each(COMPLETION_RATIO));
    await setOption(harness.prisma, 'CacheRatio', { [model]: expected.cacheRatio });
    await setOption(harness.prisma, 'CacheCreationRatio', { [model]: expected.cacheCreationRatio });
    await harness.reloadCaches();
    upstream.setMode('ok', expected.cache);
    const customer = await createCustomer(harness.prisma, { quota: 100_000 });

    const response = await respond(openAiClient(harness, customer.key), stream, { model, input: INPUT, ...(expected.reasoning ? { reasoning: { effort: 'low' } } : {}) });
    expect(response.usage).toEqual({
      input_tokens: expected.input,
      input_tokens_details: { cached_tokens: expected.cached, cache_write_tokens: expected.written },
      output_tokens: expected.output,
      output_tokens_details: { reasoning_tokens: expected.reasoningTokens },
      total_tokens: expected.input + expected.output,
    });

    await expectChargedRow(customer.userId, 100_000, {
      ...expected,
      model,
      stream,
      prompt: expected.input,
      completion: expected.output,
      reasoning: expected.reasoningTokens,
      modelRatio: MODEL_RATIO,
      completionRatio: COMPLETION_RATIO,
    });
  });
});

describe.each(named([NATIVE, VIA_ANTHROPIC]))('the reservation of a call on the %s channel', (_name, route) => {
  /** Unit prices: the reservation is the estimated tokens. */
  const QUOTA = 4_000;
  const MEGABYTE = 1024 * 1024;

  let model: string;
  beforeEach(async () => {
    model = await withRoute(route);
  });

  async function call(body: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'model'>) {
    const customer = await createCustomer(harness.prisma, { quota: QUOTA });
    return openAiClient(harness, customer.key).responses.create({ model, ...body }).catch((err: unknown) => err);
  }

  it('holds max_output_tokens (4096 when unset) on top of the input', async () => {
    const refused = await call({ input: 'hi' });
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(refused).toMatchObject({ status: 403, code: 'insufficient_user_quota' });
    expect(upstream.requests).toHaveLength(0);
    expect(await call({ input: 'hi', max_output_tokens: 100 })).toMatchObject({ status: 'completed' });
  });

  it('sizes a megabyte of text at 4 bytes per token, a megabyte image as one image', async () => {
    const text = await call({ input: 'word '.repeat(MEGABYTE / 5), max_output_tokens: 16 });
    expect(text).toMatchObject({ status: 403, code: 'insufficient_user_quota' });
    const image = `data:image/png;base64,${'A'.repeat(MEGABYTE)}`;
    const pictured = await call({
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: image, detail: 'auto' }] }],
      max_output_tokens: 16,
    });
    expect(pictured).toMatchObject({ status: 'completed' });
  });
});
