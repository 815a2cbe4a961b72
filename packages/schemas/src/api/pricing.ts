import { z } from 'zod';
import type { PriceUnit } from '../pricing';
import type { ApiOperation } from './operation';

const usdPer1MFields = {
  input_usd_per_1m: z.number(),
  cached_input_usd_per_1m: z.number(),
  cache_write_usd_per_1m: z.number(),
  output_usd_per_1m: z.number(),
};

/** A long-context tier (docs/api.md 2.11): the prices of a whole call whose prompt exceeds the threshold. */
export const modelPriceTierSchema = z.object({ above_prompt_tokens: z.number().int(), ...usdPer1MFields });
export type ModelPriceTierView = z.output<typeof modelPriceTierSchema>;

/** One priced model of docs/api.md 3.8 `GET /api/pricing`, in USD per 1M tokens for the caller's group. */
export const modelPriceSchema = z.object({
  model_name: z.string(),
  ...usdPer1MFields,
  /** By threshold; empty when the model has one price whatever the prompt's length. */
  tiers: z.array(modelPriceTierSchema),
});
export type ModelPriceView = z.output<typeof modelPriceSchema>;

/** A priced server tool (docs/api.md 2.14): USD per call for the caller's group. */
export const toolPriceSchema = z.object({ tool: z.string(), usd_per_call: z.number() });
export type ToolPriceView = z.output<typeof toolPriceSchema>;

export const PRICE_UNITS = ['image', '1k_characters', 'minute', 'request'] as const satisfies readonly PriceUnit[];

/**
 * The unit a ModelPrice is charged per, as the model's name tells it: the relay counts units by the
 * route called (docs/api.md 2.14), so this is what a price list can say before any call. Undefined
 * when the name does not tell.
 */
export function priceUnitOfModel(model: string): PriceUnit | undefined {
  const name = model.toLowerCase();
  if (name.startsWith('dall-e') || name.startsWith('gpt-image') || name.includes('-image')) return 'image';
  if (name.startsWith('tts') || name.endsWith('-tts')) return '1k_characters';
  if (name.startsWith('whisper') || name.includes('transcribe')) return 'minute';
  if (name.startsWith('rerank')) return 'request';
  return undefined;
}

/** A model priced per unit (ModelPrice, docs/api.md 2.14): USD per unit for the caller's group, and the unit when its name tells it. */
export const unitPriceSchema = z.object({ model_name: z.string(), usd_per_unit: z.number(), unit: z.enum(PRICE_UNITS).optional() });
export type UnitPriceView = z.output<typeof unitPriceSchema>;

export const pricingSchema = z.object({
  group: z.string(),
  group_ratio: z.number(),
  items: z.array(modelPriceSchema),
  tools: z.array(toolPriceSchema),
  unit_prices: z.array(unitPriceSchema),
});
export type PricingView = z.output<typeof pricingSchema>;

export const pricingOperations = [
  { method: 'get', path: '/api/pricing', auth: 'user', summary: 'What each priced model costs the caller\'s group', response: pricingSchema },
] as const satisfies readonly ApiOperation[];
