// docs/api.md 2.5 and 2.11: what a call costs, cached and cache-write prompt tokens priced apart.
import { parseOptions, type Price } from '@modelgate/schemas';
import { type ChargedTokens, chargeFor, priceFor } from '../src/features/billing/pricing';

const UNIT: Price = { modelRatio: 1, completionRatio: 1, groupRatio: 1, cacheRatio: 1, cacheCreationRatio: 1 };

describe('chargeFor', () => {
  it.each<[string, Partial<Price>, ChargedTokens, number]>([
    ['nothing used costs nothing', {}, { promptTokens: 0, completionTokens: 0 }, 0],
    ['prompt + completion x CompletionRatio, x ModelRatio', { modelRatio: 0.5, completionRatio: 4 }, { promptTokens: 100, completionTokens: 10 }, 70],
    ['without cache counts, as before 2.11', { completionRatio: 2 }, { promptTokens: 7, completionTokens: 3 }, 13],
    ['GroupRatio multiplies the whole charge', { modelRatio: 0.5, groupRatio: 3 }, { promptTokens: 10, completionTokens: 10 }, 30],
    [
      'cached tokens at CacheRatio, the rest of the prompt at full price',
      { cacheRatio: 0.1, completionRatio: 4 },
      { promptTokens: 1000, completionTokens: 100, cachedTokens: 800 },
      200 + 80 + 400,
    ],
    [
      'cache writes at CacheCreationRatio',
      { cacheRatio: 0.1, cacheCreationRatio: 1.25 },
      { promptTokens: 1000, completionTokens: 0, cachedTokens: 200, cacheWriteTokens: 600 },
      200 + 20 + 750,
    ],
    [
      'cached > prompt (a provider quirk): the uncached part is 0, never a credit',
      { cacheRatio: 0.1 },
      { promptTokens: 100, completionTokens: 10, cachedTokens: 150 },
      0 + 15 + 10,
    ],
    [
      'cached + cache writes > prompt: the uncached part is 0',
      { cacheRatio: 0.5, cacheCreationRatio: 2 },
      { promptTokens: 10, completionTokens: 0, cachedTokens: 8, cacheWriteTokens: 8 },
      0 + 4 + 16,
    ],
    [
      'the worked example of docs/api.md 2.11',
      { modelRatio: 1.5, completionRatio: 5, cacheRatio: 0.1, cacheCreationRatio: 1.25 },
      { promptTokens: 10_000, completionTokens: 300, cachedTokens: 8_000, cacheWriteTokens: 1_500 },
      7013,
    ],
    ['rounds to the nearest unit', { modelRatio: 0.15, completionRatio: 8.333333 }, { promptTokens: 3, completionTokens: 5 }, 7],
    ['at least 1 when any token was used', { modelRatio: 0.001 }, { promptTokens: 1, completionTokens: 0 }, 1],
    ['at least 1 for a fully cached prompt at ratio 0', { cacheRatio: 0 }, { promptTokens: 50, completionTokens: 0, cachedTokens: 50 }, 1],
    ['ModelRatio 0 still costs 1 when tokens were used', { modelRatio: 0 }, { promptTokens: 5, completionTokens: 5 }, 1],
  ])('%s', (_case, ratios, usage, expected) => {
    expect(chargeFor({ ...UNIT, ...ratios }, usage)).toBe(expected);
  });
});

describe('priceFor', () => {
  const defaults = parseOptions([]);

  it('reads every ratio of the model and group', () => {
    const options = parseOptions([
      { key: 'ModelRatio', value: '{"m": 2}' },
      { key: 'CompletionRatio', value: '{"m": 3}' },
      { key: 'CacheRatio', value: '{"m": 0.2}' },
      { key: 'CacheCreationRatio', value: '{"m": 1.5}' },
      { key: 'GroupRatio', value: '{"vip": 0.8}' },
    ]);
    expect(priceFor(options, 'm', 'vip')).toEqual({ modelRatio: 2, completionRatio: 3, groupRatio: 0.8, cacheRatio: 0.2, cacheCreationRatio: 1.5 });
  });

  it.each([
    // [model, CacheRatio, CacheCreationRatio] with no entry for the model in either map
    ['claude-sonnet-9-9', 1, 1.25],
    ['gpt-9', 1, 1],
    ['gemini-9-pro', 1, 1],
  ])('prices %s without cache entries at CacheRatio %s and CacheCreationRatio %s', (model, cacheRatio, cacheCreationRatio) => {
    const options = parseOptions([{ key: 'ModelRatio', value: JSON.stringify({ [model]: 1 }) }]);
    expect(priceFor(options, model, 'default')).toMatchObject({ cacheRatio, cacheCreationRatio, completionRatio: 1, groupRatio: 1 });
  });

  it('uses the shipped cache prices of a fresh install', () => {
    expect(priceFor(defaults, 'claude-sonnet-4-5', 'default')).toEqual({
      modelRatio: 1.5,
      completionRatio: 5,
      groupRatio: 1,
      cacheRatio: 0.1,
      cacheCreationRatio: 1.25,
      // USD 6 / 22.50 per 1M tokens above 200K prompt tokens (1M context beta).
      tiers: [{ above_prompt_tokens: 200_000, model_ratio: 3, completion_ratio: 3.75 }],
    });
    expect(priceFor(defaults, 'gpt-4o', 'default')).toMatchObject({ cacheRatio: 0.5, cacheCreationRatio: 1 });
    expect(priceFor(defaults, 'gpt-5-mini', 'default')).toMatchObject({ cacheRatio: 0.1 });
  });

  it('refuses a model without a ModelRatio with 400 model_price_error', () => {
    expect(() => priceFor(defaults, 'unpriced-model', 'default')).toThrow(expect.objectContaining({ code: 'model_price_error', status: 400 }));
  });
});
