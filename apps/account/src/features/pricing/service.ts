import { groupRatioOf, type ModelPriceView, type PricingView, ratiosOf, readOptions, usdPer1M } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';

/** Every model with a ModelRatio (defaults included), priced as the relay charges it (docs/api.md 2.11), by model name. */
export async function getPricing(deps: AccountDeps, group: string): Promise<PricingView> {
  const options = await readOptions(deps.prisma);
  const items: ModelPriceView[] = [];
  for (const model of [...options.ModelRatio.keys()].sort()) {
    const price = ratiosOf(options, model, group);
    if (!price) continue;
    const usd = usdPer1M(price);
    items.push({
      model_name: model,
      input_usd_per_1m: usd.input,
      cached_input_usd_per_1m: usd.cachedInput,
      cache_write_usd_per_1m: usd.cacheWrite,
      output_usd_per_1m: usd.output,
    });
  }
  return { group, group_ratio: groupRatioOf(options, group), items };
}
