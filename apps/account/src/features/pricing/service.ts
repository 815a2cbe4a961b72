import { groupRatioOf, type ModelPriceView, priceAtTier, priceUnitOfModel, type PricingView, ratiosOf, readOptions, type UsdPer1M, usdPer1M } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';

function usdFields(usd: UsdPer1M) {
  return { input_usd_per_1m: usd.input, cached_input_usd_per_1m: usd.cachedInput, cache_write_usd_per_1m: usd.cacheWrite, output_usd_per_1m: usd.output };
}

/** A USD price for the group, rounded to 1e-9 USD: the product of two decimals carries float noise below it. */
function usdForGroup(usd: number, groupRatio: number): number {
  return Math.round(usd * groupRatio * 1e9) / 1e9;
}

/**
 * Every model with a ModelRatio (defaults included), priced as the relay charges it (docs/api.md
 * 2.11), by model name, with its long-context tiers; every priced server tool (2.14), by name; and
 * every model with a ModelPrice (2.14), by name, with its unit where the name tells it.
 */
export async function getPricing(deps: AccountDeps, group: string): Promise<PricingView> {
  const options = await readOptions(deps.prisma);
  const groupRatio = groupRatioOf(options, group);
  const items: ModelPriceView[] = [];
  for (const model of [...options.ModelRatio.keys()].sort()) {
    const price = ratiosOf(options, model, group);
    if (!price) continue;
    items.push({
      model_name: model,
      ...usdFields(usdPer1M(price)),
      tiers: (price.tiers ?? []).map((tier) => ({
        above_prompt_tokens: tier.above_prompt_tokens,
        ...usdFields(usdPer1M(priceAtTier(price, tier))),
      })),
    });
  }
  const tools = [...options.ToolPrice.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tool, usd]) => ({ tool, usd_per_call: usdForGroup(usd, groupRatio) }));
  const unitPrices = [...options.ModelPrice.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([model, usd]) => {
      const unit = priceUnitOfModel(model);
      return { model_name: model, usd_per_unit: usdForGroup(usd, groupRatio), ...(unit ? { unit } : {}) };
    });
  return { group, group_ratio: groupRatio, items, tools, unit_prices: unitPrices };
}
