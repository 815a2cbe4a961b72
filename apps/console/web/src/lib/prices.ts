import { type ModelRatios, type PriceUnit, usdPer1M, type UsdPer1M } from '@modelgate/schemas/pricing';

export type { ModelRatios, PriceUnit, UsdPer1M };

/** USD per 1M tokens of a model priced with `ratios` (group ratio 1): what the Prices page shows. Saving goes the other way with `ratiosFromUsdPer1M`. */
export function pricesOfRatios(ratios: ModelRatios): UsdPer1M {
  return usdPer1M({ ...ratios, groupRatio: 1 });
}

/** What one ModelPrice unit is (docs/api.md 2.14), as "USD 0.04 per …" reads it. */
export const PRICE_UNIT_LABELS: Record<PriceUnit, string> = {
  image: 'image',
  '1k_characters': '1,000 characters',
  minute: 'minute',
  request: 'request',
};
