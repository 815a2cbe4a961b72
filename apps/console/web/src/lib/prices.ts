import { type ModelRatios, usdPer1M, type UsdPer1M } from '@modelgate/schemas/pricing';

export type { ModelRatios, UsdPer1M };

/** USD per 1M tokens of a model priced with `ratios` (group ratio 1): what the Prices page shows. Saving goes the other way with `ratiosFromUsdPer1M`. */
export function pricesOfRatios(ratios: ModelRatios): UsdPer1M {
  return usdPer1M({ ...ratios, groupRatio: 1 });
}
