import { AppError } from '@modelgate/errors';
import type { OptionValues } from '@modelgate/schemas';

/** The ratios one call is priced with (recorded on its ledger row). */
export interface Price {
  modelRatio: number;
  completionRatio: number;
  groupRatio: number;
}

/**
 * 400 `model_price_error` when the model has no ModelRatio (docs/api.md 1.3). The ratio maps are Maps:
 * a model or group named `constructor` finds its own entry or none, never an inherited member.
 */
export function priceFor(options: OptionValues, model: string, group: string): Price {
  const modelRatio = options.ModelRatio.get(model);
  if (modelRatio === undefined) throw new AppError('model_price_error', `model ${model} has no price configured`);
  return {
    modelRatio,
    completionRatio: options.CompletionRatio.get(model) ?? 1,
    groupRatio: options.GroupRatio.get(group) ?? 1,
  };
}

/**
 * docs/api.md 2.5: round((prompt + completion x CompletionRatio) x ModelRatio x GroupRatio), at least 1
 * when any token was used, 0 when none was.
 */
export function chargeFor(price: Price, promptTokens: number, completionTokens: number): number {
  if (promptTokens + completionTokens <= 0) return 0;
  const quota = Math.round(
    (promptTokens + completionTokens * price.completionRatio) * price.modelRatio * price.groupRatio,
  );
  return Math.max(1, quota);
}
