import { AppError } from '@modelgate/errors';
import { groupRatioOf, type MediaBilled, type OptionValues, type PriceUnit, type Price, priceAtTier, pricedAt, ratiosOf, tierOf } from '@modelgate/schemas';
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
    oneCallEach += usdQuota(options, usd, 1, groupRatio);
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

/** round(USD x units x GroupRatio x QuotaPerUnit) (docs/api.md 2.14): server tool calls, media units. */
function usdQuota(options: OptionValues, usdEach: number, units: number, groupRatio: number): number {
  return Math.round(usdEach * units * groupRatio * options.QuotaPerUnit);
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
    charges[tool] = { count, usdEach, quota: usdQuota(options, usdEach, count, groupRatio) };
  }
  return charges;
}

/** What a settled call costs and the prices its consume row records (docs/api.md 2.11, 2.14). */
export interface SettledCharge {
  quota: number;
  /** The ratios charged (a long-context tier's where the prompt reached one); 0 for a call priced per unit. */
  modelRatio: number;
  completionRatio: number;
  groupRatio: number;
  cacheRatio: number;
  cacheCreationRatio: number;
  tierAbovePromptTokens?: number;
  serverTools?: Record<string, ToolCharge>;
  /** A media call: what it had and, priced per unit, the units and their price. */
  media?: MediaBilled;
}

/** A token-priced call's charge: its tokens at the ratios of the tier the prompt reached, and its server tools. */
export function tokenCharge(options: OptionValues, price: Price, usage: ChatUsage): SettledCharge {
  const tier = tierOf(price, usage.promptTokens);
  const charged = priceAtTier(price, tier);
  const serverTools = toolChargesFor(options, usage.serverToolCalls, price.groupRatio);
  let quota = chargeFor(price, usage);
  for (const tool in serverTools) quota += serverTools[tool]!.quota;
  return {
    quota,
    modelRatio: charged.modelRatio,
    completionRatio: charged.completionRatio,
    groupRatio: price.groupRatio,
    cacheRatio: price.cacheRatio,
    cacheCreationRatio: price.cacheCreationRatio,
    tierAbovePromptTokens: tier?.above_prompt_tokens,
    serverTools,
  };
}

/** Units of a call priced per unit (docs/api.md 2.14), and what they count, as the log row shows it. */
export interface MeteredUse {
  units: number;
  billed: Pick<MediaBilled, 'images' | 'characters' | 'seconds' | 'requests'>;
}

/**
 * How a media call is priced (docs/api.md 2.14): by the tokens its answer reports where the model
 * has a ModelRatio, otherwise by ModelPrice per unit.
 */
export interface Metering {
  unit: PriceUnit;
  /** Whether answers of this call can report tokens (a ModelRatio prices them). */
  tokenPriced: boolean;
  /** The units known before the call (reserved, and charged when the answer tells no more). */
  estimate: MeteredUse;
  /** Moderations: free when the model has no price at all, instead of refused. */
  freeUnlessPriced?: boolean;
}

/** What a metered call's answer reported, as its delivery says. */
export interface MeteredDelivery {
  usage: ChatUsage;
  tokensReported?: boolean;
  metered?: MeteredUse;
}

/** A media call's prices (docs/api.md 2.14): its token ratios where answers report tokens, its price per unit. */
export interface MeteredPrice {
  tokens?: Price;
  usdPerUnit?: number;
  groupRatio: number;
}

/**
 * The prices of a metered call; 400 `model_price_error` when the model has neither a ModelRatio its
 * answers' tokens could be priced with nor a ModelPrice (moderations are free then).
 */
export function meteredPriceFor(options: OptionValues, model: string, group: string, metering: Metering): MeteredPrice {
  const tokens = metering.tokenPriced ? ratiosOf(options, model, group) : undefined;
  const usdPerUnit = options.ModelPrice.get(model);
  if (!tokens && usdPerUnit === undefined && !metering.freeUnlessPriced) {
    throw new AppError('model_price_error', `model ${model} has no price configured`);
  }
  return { tokens, usdPerUnit, groupRatio: groupRatioOf(options, group) };
}

/** The reservation of a metered call: the larger of its token estimate and its units' price, as either may apply. */
export function meteredReservation(options: OptionValues, price: MeteredPrice, estimate: ChargedTokens, metering: Metering): number {
  const byTokens = price.tokens ? chargeFor(price.tokens, estimate) : 0;
  const byUnits = price.usdPerUnit === undefined ? 0 : usdQuota(options, price.usdPerUnit, metering.estimate.units, price.groupRatio);
  return Math.max(byTokens, byUnits);
}

/**
 * docs/api.md 2.14: tokens the answer reported, at the model's ratios; otherwise the units (the
 * answer's, else the request's) at ModelPrice; a model priced by tokens only whose answer reported
 * none is charged its estimate; free when the model has no price (moderations).
 */
export function meteredCharge(
  options: OptionValues,
  price: MeteredPrice,
  metering: Metering,
  estimate: ChargedTokens,
  delivery: MeteredDelivery,
): SettledCharge {
  const use = delivery.metered ?? metering.estimate;
  const tokens = price.tokens;
  if (tokens && (delivery.tokensReported || price.usdPerUnit === undefined)) {
    const charge = tokenCharge(options, tokens, delivery.tokensReported ? delivery.usage : { ...delivery.usage, ...estimate });
    return { ...charge, media: { ...use.billed } };
  }
  const usdPerUnit = price.usdPerUnit ?? 0;
  const unitPriced = price.usdPerUnit === undefined ? {} : { units: use.units, unit: metering.unit, usd_per_unit: usdPerUnit };
  return {
    quota: usdQuota(options, usdPerUnit, use.units, price.groupRatio),
    modelRatio: 0,
    completionRatio: 0,
    groupRatio: price.groupRatio,
    cacheRatio: 1,
    cacheCreationRatio: 1,
    media: { ...use.billed, ...unitPriced },
  };
}
