import { ANTHROPIC_CACHE_CREATION_RATIO, type ModelRatioTier, type OptionValues } from './options';

/** docs/api.md 2.5: model ratio 1 = USD 2 per 1M tokens (USD 0.002 per 1K). */
export const USD_PER_1M_TOKENS_AT_RATIO_1 = 2;

/** The ratios a call of one model in one group is priced with (recorded on its ledger row). */
export interface Price {
  modelRatio: number;
  completionRatio: number;
  groupRatio: number;
  /** Multiplier on cached prompt tokens (docs/api.md 2.11). */
  cacheRatio: number;
  /** Multiplier on cache-write prompt tokens (docs/api.md 2.11). */
  cacheCreationRatio: number;
  /** Long-context tiers (ModelRatioTiers, docs/api.md 2.11), by threshold; none when absent. */
  tiers?: readonly ModelRatioTier[];
}

/**
 * The ratios of `model` for `group`, or undefined when the model has no ModelRatio (it is not
 * priced). The ratio maps are Maps: a model or group named `constructor` finds its own entry or
 * none, never an inherited member. Unset ratios (docs/api.md 2.5, 2.11) count as 1, but for cache
 * writes of Anthropic models (`claude-*`): 1.25.
 */
export function ratiosOf(options: OptionValues, model: string, group: string): Price | undefined {
  const modelRatio = options.ModelRatio.get(model);
  if (modelRatio === undefined) return undefined;
  return {
    modelRatio,
    completionRatio: options.CompletionRatio.get(model) ?? 1,
    groupRatio: groupRatioOf(options, group),
    cacheRatio: options.CacheRatio.get(model) ?? 1,
    cacheCreationRatio: options.CacheCreationRatio.get(model) ?? (model.startsWith('claude-') ? ANTHROPIC_CACHE_CREATION_RATIO : 1),
    tiers: options.ModelRatioTiers.get(model),
  };
}

/**
 * The long-context tier a call with `promptTokens` prompt tokens is priced at (docs/api.md 2.11):
 * the highest whose `above_prompt_tokens` the prompt exceeds, or undefined (the base ratios).
 */
export function tierOf(price: Price, promptTokens: number): ModelRatioTier | undefined {
  let reached: ModelRatioTier | undefined;
  for (const tier of price.tiers ?? []) {
    if (promptTokens <= tier.above_prompt_tokens) break;
    reached = tier;
  }
  return reached;
}

/** The price with a tier's ratios in place of the base ones (the cache and group ratios stay). */
export function priceAtTier(price: Price, tier: ModelRatioTier | undefined): Price {
  return tier ? { ...price, modelRatio: tier.model_ratio, completionRatio: tier.completion_ratio } : price;
}

/** The ratios a call with `promptTokens` prompt tokens is charged with: its tier's, if it reaches one. */
export function pricedAt(price: Price, promptTokens: number): Price {
  return priceAtTier(price, tierOf(price, promptTokens));
}

/** docs/api.md 2.5: a group missing from GroupRatio counts as 1. */
export function groupRatioOf(options: OptionValues, group: string): number {
  return options.GroupRatio.get(group) ?? 1;
}

/** What one kind of token costs in USD per 1M tokens: the ratios above, read at ratio 1 = USD 2 (docs/api.md 2.5). */
export interface UsdPer1M {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
}

/**
 * USD per 1M tokens of each kind, as the charge formula of docs/api.md 2.11 prices them: input at
 * ModelRatio x GroupRatio, cached input x CacheRatio, cache writes x CacheCreationRatio, output x
 * CompletionRatio. Rounded to 1e-6 USD (the ratios' float products carry noise below it).
 */
export function usdPer1M(price: Price): UsdPer1M {
  const input = USD_PER_1M_TOKENS_AT_RATIO_1 * price.modelRatio * price.groupRatio;
  const usd = (multiplier: number) => Math.round(input * multiplier * 1e6) / 1e6;
  return { input: usd(1), cachedInput: usd(price.cacheRatio), cacheWrite: usd(price.cacheCreationRatio), output: usd(price.completionRatio) };
}

/** The ratios of one model that `usdPer1M` reads back as these prices (group ratio 1), for editing prices in USD. */
export type ModelRatios = Pick<Price, 'modelRatio' | 'completionRatio' | 'cacheRatio' | 'cacheCreationRatio'>;

/**
 * The inverse of `usdPer1M` at group ratio 1: ModelRatio = input / USD 2, the others relative to the
 * input price. An input price of 0 (a free model) keeps the other ratios at 1: there is nothing to be
 * relative to, and every other price is then 0 too.
 */
export function ratiosFromUsdPer1M(prices: UsdPer1M): ModelRatios {
  // 12 significant digits: 0.3 / 3 is stored as 0.1, not 0.09999999999999999.
  const tidy = (ratio: number) => Number(ratio.toPrecision(12));
  const modelRatio = tidy(prices.input / USD_PER_1M_TOKENS_AT_RATIO_1);
  const relative = (usd: number) => (prices.input === 0 ? 1 : tidy(usd / prices.input));
  return {
    modelRatio,
    completionRatio: relative(prices.output),
    cacheRatio: relative(prices.cachedInput),
    cacheCreationRatio: relative(prices.cacheWrite),
  };
}

/** What one ModelPrice unit is on each surface that has one (docs/api.md 2.14). */
export type PriceUnit = 'image' | '1k_characters' | 'minute' | 'request';

/**
 * What a media call's consume row says was billed, under `other` (docs/api.md 2.14): the quantities
 * the call had (images, speech characters, audio seconds, requests) and, when it was priced per
 * unit (ModelPrice), the units charged, their unit and USD price each.
 */
export interface MediaBilled {
  images?: number;
  characters?: number;
  seconds?: number;
  requests?: number;
  units?: number;
  unit?: PriceUnit;
  usd_per_unit?: number;
}
