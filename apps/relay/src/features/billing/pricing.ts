import { AppError } from '@modelgate/errors';
import { type OptionValues, type Price, ratiosOf } from '@modelgate/schemas';

/** Token counts as charged: `promptTokens` includes the cached and cache-write ones (docs/api.md 2.6). */
export interface ChargedTokens {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

/** The ratios of a call (`ratiosOf`); 400 `model_price_error` when the model has no ModelRatio (docs/api.md 1.3). */
export function priceFor(options: OptionValues, model: string, group: string): Price {
  const price = ratiosOf(options, model, group);
  if (!price) throw new AppError('model_price_error', `model ${model} has no price configured`);
  return price;
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
