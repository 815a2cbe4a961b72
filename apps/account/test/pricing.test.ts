import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { loggedInUser } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

interface UsdPer1M {
  input_usd_per_1m: number;
  cached_input_usd_per_1m: number;
  cache_write_usd_per_1m: number;
  output_usd_per_1m: number;
}
interface ModelPrice extends UsdPer1M {
  model_name: string;
  tiers: (UsdPer1M & { above_prompt_tokens: number })[];
}
interface Pricing {
  group: string;
  group_ratio: number;
  items: ModelPrice[];
  tools: { tool: string; usd_per_call: number }[];
  unit_prices: { model_name: string; usd_per_unit: number; unit?: string }[];
}

async function setOption(key: string, value: unknown) {
  await prisma.option.upsert({ where: { key }, create: { key, value: JSON.stringify(value) }, update: { value: JSON.stringify(value) } });
}

describe('GET /api/pricing', () => {
  it('prices the default models as docs/api.md 2.11 lists them, sorted by model', async () => {
    const user = await loggedInUser(account);
    const pricing = expectOk(await user.agent.get('/api/pricing')) as Pricing;
    expect(pricing).toMatchObject({ group: 'default', group_ratio: 1 });
    const names = pricing.items.map((item) => item.model_name);
    expect(names).toEqual([...names].sort());
    const byModel = new Map(pricing.items.map((item) => [item.model_name, item]));
    expect(byModel.get('claude-sonnet-4-5')).toEqual({
      model_name: 'claude-sonnet-4-5',
      input_usd_per_1m: 3,
      cached_input_usd_per_1m: 0.3,
      cache_write_usd_per_1m: 3.75,
      output_usd_per_1m: 15,
      // docs/api.md 2.11: above 200K prompt tokens (1M context beta) the whole call costs USD 6 / 22.50.
      tiers: [{ above_prompt_tokens: 200_000, input_usd_per_1m: 6, cached_input_usd_per_1m: 0.6, cache_write_usd_per_1m: 7.5, output_usd_per_1m: 22.5 }],
    });
    expect(byModel.get('gemini-2.5-pro')?.tiers).toEqual([
      { above_prompt_tokens: 200_000, input_usd_per_1m: 2.5, cached_input_usd_per_1m: 0.25, cache_write_usd_per_1m: 2.5, output_usd_per_1m: 15 },
    ]);
    expect(byModel.get('gpt-4o-mini')).toEqual({
      model_name: 'gpt-4o-mini',
      input_usd_per_1m: 0.15,
      cached_input_usd_per_1m: 0.075,
      cache_write_usd_per_1m: 0.15,
      output_usd_per_1m: 0.6,
      tiers: [],
    });
    // docs/api.md 2.14: the server tools' default prices, USD per call.
    expect(pricing.tools).toEqual(expect.arrayContaining([
      { tool: 'web_search', usd_per_call: 0.01 },
      { tool: 'web_search_preview', usd_per_call: 0.025 },
      { tool: 'googleSearch', usd_per_call: 0.035 },
      { tool: 'web_fetch', usd_per_call: 0 },
    ]));
    expect(pricing.tools.map((tool) => tool.tool)).not.toContain('code_execution');
    expect(byModel.get('gemini-2.5-flash')).toMatchObject({ input_usd_per_1m: 0.3, output_usd_per_1m: 2.5, cached_input_usd_per_1m: 0.03 });
    expect(byModel.get('text-embedding-3-small')).toMatchObject({ input_usd_per_1m: 0.02, output_usd_per_1m: 0.02 });
  });

  it('lists the per-unit prices (docs/api.md 2.14) with the unit each model name tells, sorted by model', async () => {
    const user = await loggedInUser(account);
    const pricing = expectOk(await user.agent.get('/api/pricing')) as Pricing;
    const names = pricing.unit_prices.map((price) => price.model_name);
    expect(names).toEqual([...names].sort());
    expect(pricing.unit_prices).toEqual(expect.arrayContaining([
      { model_name: 'dall-e-3', usd_per_unit: 0.04, unit: 'image' },
      { model_name: 'tts-1', usd_per_unit: 0.015, unit: '1k_characters' },
      { model_name: 'whisper-1', usd_per_unit: 0.006, unit: 'minute' },
      { model_name: 'gpt-4o-transcribe', usd_per_unit: 0.006, unit: 'minute' },
      { model_name: 'rerank-v3.5', usd_per_unit: 0.002, unit: 'request' },
    ]));
    // Priced both ways: by tokens when the answer reports them, per unit otherwise; both are listed.
    expect(pricing.unit_prices).toContainEqual({ model_name: 'gpt-4o-mini-tts', usd_per_unit: 0.015, unit: '1k_characters' });
    expect(pricing.items.map((item) => item.model_name)).toContain('gpt-4o-mini-tts');
  });

  it("applies the caller's group ratio and the stored ratio maps", async () => {
    await setOption('ModelRatio', { 'zeta-model': 1, 'alpha-model': 0.5 });
    await setOption('CompletionRatio', { 'zeta-model': 3 });
    await setOption('CacheRatio', { 'alpha-model': 0.2 });
    await setOption('GroupRatio', { default: 1, vip: 0.8 });
    await setOption('ModelRatioTiers', { 'zeta-model': [{ above_prompt_tokens: 128_000, model_ratio: 2, completion_ratio: 2 }] });
    await setOption('ToolPrice', { web_search: 0.01, googleSearch: 0.035 });
    await setOption('ModelPrice', { 'my-reranker': 0.001, 'gemini-2.5-flash-image': 0.039, 'dall-e-3': 0.04 });
    const user = await loggedInUser(account, { group: 'vip' });
    expect(expectOk(await user.agent.get('/api/pricing'))).toEqual({
      group: 'vip',
      group_ratio: 0.8,
      items: [
        { model_name: 'alpha-model', input_usd_per_1m: 0.8, cached_input_usd_per_1m: 0.16, cache_write_usd_per_1m: 0.8, output_usd_per_1m: 0.8, tiers: [] },
        {
          model_name: 'zeta-model',
          input_usd_per_1m: 1.6,
          cached_input_usd_per_1m: 1.6,
          cache_write_usd_per_1m: 1.6,
          output_usd_per_1m: 4.8,
          tiers: [{ above_prompt_tokens: 128_000, input_usd_per_1m: 3.2, cached_input_usd_per_1m: 3.2, cache_write_usd_per_1m: 3.2, output_usd_per_1m: 6.4 }],
        },
      ],
      tools: [
        { tool: 'googleSearch', usd_per_call: 0.028 },
        { tool: 'web_search', usd_per_call: 0.008 },
      ],
      // No unit for a name that does not tell it (`rerank*` would).
      unit_prices: [
        { model_name: 'dall-e-3', usd_per_unit: 0.032, unit: 'image' },
        { model_name: 'gemini-2.5-flash-image', usd_per_unit: 0.0312, unit: 'image' },
        { model_name: 'my-reranker', usd_per_unit: 0.0008 },
      ],
    });
  });

  it('counts a group missing from GroupRatio as 1', async () => {
    await setOption('ModelRatio', { m: 1 });
    const user = await loggedInUser(account, { group: 'unlisted' });
    expect(expectOk(await user.agent.get('/api/pricing'))).toMatchObject({ group: 'unlisted', group_ratio: 1, items: [{ input_usd_per_1m: 2 }] });
  });

  it('needs a login', async () => {
    expectFailure(await request(app).get('/api/pricing'), 401, 'unauthorized');
  });
});
