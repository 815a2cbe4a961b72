import { AppError } from '@modelgate/errors';
import { type OptionValues, type Price, pricedAt, ratiosOf } from '@modelgate/schemas';
import type { ChatUsage, ServerToolCalls } from '../../core/chat';

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
 * token was used, 0 when none was; ModelRatio and CompletionRatio those of the long-context tier the
 * prompt reaches, if any. A provider reporting more cached tokens than prompt tokens has its
 * uncached part taken as 0, never as a credit.
 */
export function chargeFor(price: Price, usage: ChargedTokens): number {
  const { promptTokens, completionTokens, cachedTokens = 0, cacheWriteTokens = 0 } = usage;
  if (promptTokens + completionTokens + cachedTokens + cacheWriteTokens <= 0) return 0;
  const { modelRatio, completionRatio } = pricedAt(price, promptTokens);
  const uncached = Math.max(0, promptTokens - cachedTokens - cacheWriteTokens);
  const tokens = uncached + cachedTokens * price.cacheRatio + cacheWriteTokens * price.cacheCreationRatio + completionTokens * completionRatio;
  return Math.max(1, Math.round(tokens * modelRatio * price.groupRatio));
}

/** A server tool the request offers (docs/api.md 2.14): its ToolPrice name and the field that offers it. */
export interface OfferedTool {
  tool: string;
  /** The request field, in the client's dialect (`tools.0.type`, `web_search_options` ...). */
  param: string;
}

/**
 * docs/api.md 2.14: a request offering a server tool without a ToolPrice is refused before any
 * upstream call (400 `model_price_error` naming the tool); returns the quota one call of each
 * offered tool costs, which the reservation adds.
 */
export function checkToolPrices(options: OptionValues, offered: readonly OfferedTool[], groupRatio: number): number {
  let oneCallEach = 0;
  for (const { tool, param } of offered) {
    const usd = options.ToolPrice.get(tool);
    if (usd === undefined) throw new AppError('model_price_error', `server tool ${tool} has no price configured (ToolPrice)`, { param });
    oneCallEach += toolQuota(options, usd, 1, groupRatio);
  }
  return oneCallEach;
}

/** `usage` with the server tool calls an answer showed, when there were any (docs/api.md 2.14). */
export function withServerToolCalls(usage: ChatUsage, calls: ServerToolCalls | undefined): ChatUsage {
  if (calls) usage.serverToolCalls = calls;
  return usage;
}

/** What the calls of one server tool cost, as the consume row records them. */
export interface ToolCharge {
  count: number;
  usdEach: number;
  quota: number;
}

/** round(USD x calls x GroupRatio x QuotaPerUnit) (docs/api.md 2.14). */
function toolQuota(options: OptionValues, usdEach: number, count: number, groupRatio: number): number {
  return Math.round(usdEach * count * groupRatio * options.QuotaPerUnit);
}

/**
 * The charge of each server tool the provider reported calls of, at its ToolPrice now (a tool
 * whose price root removed since the request was accepted is recorded at USD 0); undefined when
 * none was called.
 */
export function toolChargesFor(options: OptionValues, calls: ServerToolCalls | undefined, groupRatio: number): Record<string, ToolCharge> | undefined {
  let charges: Record<string, ToolCharge> | undefined;
  for (const [tool, count] of Object.entries(calls ?? {})) {
    if (count <= 0) continue;
    const usdEach = options.ToolPrice.get(tool) ?? 0;
    charges ??= {};
    charges[tool] = { count, usdEach, quota: toolQuota(options, usdEach, count, groupRatio) };
  }
  return charges;
}
