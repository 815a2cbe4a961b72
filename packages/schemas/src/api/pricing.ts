import { z } from 'zod';
import type { ApiOperation } from './operation';

/** One priced model of docs/api.md 3.8 `GET /api/pricing`, in USD per 1M tokens for the caller's group. */
export const modelPriceSchema = z.object({
  model_name: z.string(),
  input_usd_per_1m: z.number(),
  cached_input_usd_per_1m: z.number(),
  cache_write_usd_per_1m: z.number(),
  output_usd_per_1m: z.number(),
});
export type ModelPriceView = z.output<typeof modelPriceSchema>;
export const pricingSchema = z.object({ group: z.string(), group_ratio: z.number(), items: z.array(modelPriceSchema) });
export type PricingView = z.output<typeof pricingSchema>;

export const pricingOperations = [
  { method: 'get', path: '/api/pricing', auth: 'user', summary: 'What each priced model costs the caller\'s group', response: pricingSchema },
] as const satisfies readonly ApiOperation[];
