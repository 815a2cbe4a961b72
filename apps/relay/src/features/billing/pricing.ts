import { AppError } from '@modelgate/errors';
import { ANTHROPIC_CACHE_CREATION_RATIO, type OptionValues } from '@modelgate/schemas';

/** The ratios one call is priced with (recorded on its ledger row). */
export interface Price {
  modelRatio: number;
  completionRatio: number;
  groupRatio: number;
  /** Multiplier on cached prompt tokens (docs/api.md 2.11). */
  cacheRatio: number;
  /** Multiplier on cache-write prompt tokens (docs/api.md 2.11). */
  cacheCreationRatio: number;
}

/** Token counts as charged: `promptTokens` includes the cached and cache-write ones (docs/api.md 2.6). */
export interface ChargedTokens {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

/**
 * 400 `model_price_error` when the model has no ModelRatio (docs/api.md 1.3). The ratio maps are Maps:
 * a model or group named `constructor` finds its own entry or none, never an inherited member.
 * Unset cache ratios (docs/api.md 2.11): cached tokens cost the input price; cache writes 1.25 x it
 * for Anthropic models (`claude-*`), the input price otherwise.
 */
export function priceFor(options: OptionValues, model: string, group: string): Price {
  const modelRatio = options.ModelRatio.get(model);
  if (modelRatio === undefined) throw new AppError('model_price_error', `model ${model} has no price configured`);
  return {
    modelRatio,
    completionRatio: options.CompletionRatio.get(model) ?? 1,
    groupRatio: options.GroupRatio.get(group) ?? 1,
    cacheRatio: options.CacheRatio.get(model) ?? 1,
    cacheCreationRatio: options.CacheCreationRatio.get(model) ?? (model.startsWith('claude-') ? ANTHROPIC_CACHE_CREATION_RATIO : 1),
  };
}

/**
 * docs/api.md 2.11: round(((prompt - cached - cache_write) + cached x CacheRatio + cache_write x
 * CacheCreationRatio + completion x CompletionRatio) x ModelRatio x GroupRatio), at least 1 when any
 * token was used, 0 when none was. A provider reporting more cached tokens than prompt tokens has its
 * uncached part taken as 0, never as a credit.
 */
export function chargeFor(price: Price, usage: ChargedTokens): number {
  const { promptTokens, completionTokens, cachedTokens = 0, cacheWriteTokens = 0 } = usage;
  if (promptTokens + completionTokens + cachedTokens + cacheWriteTokens <= 0) return 0;
  const uncached = Math.max(0, promptTokens - cachedTokens - cacheWriteTokens);
  const tokens =
    uncached +
    cachedTokens * price.cacheRatio +
    cacheWriteTokens * price.cacheCreationRatio +
    completionTokens * price.completionRatio;
  return Math.max(1, Math.round(tokens * price.modelRatio * price.groupRatio));
}
