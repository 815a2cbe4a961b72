import { type ModelRatios, ratiosFromUsdPer1M, usdPer1M, type UsdPer1M } from '@modelgate/schemas/pricing';

export type { ModelRatios, UsdPer1M };

/** USD per 1M tokens of a model priced with `ratios` (group ratio 1): what the Prices page shows. */
export function pricesOfRatios(ratios: ModelRatios): UsdPer1M {
  return usdPer1M({ ...ratios, groupRatio: 1 });
}

/** The ratios the Prices page saves for prices typed in USD per 1M tokens. */
export function ratiosOfPrices(prices: UsdPer1M): ModelRatios {
  return ratiosFromUsdPer1M(prices);
}
