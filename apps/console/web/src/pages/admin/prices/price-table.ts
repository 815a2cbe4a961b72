import { modelNameSchema } from '@modelgate/schemas/api';
import { priceAtTier, ratiosFromUsdPer1M, ratiosOf } from '@modelgate/schemas/pricing';
import { type ModelRatios, pricesOfRatios, type UsdPer1M } from '../../../lib/prices';
import type { OptionValues } from '@modelgate/schemas/options';

/** The option maps the Prices page edits, one entry per model each (docs/api.md 2.11, 3.4). */
export const RATIO_OPTION_KEYS = ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'CacheCreationRatio'] as const;
export type RatioOptionKey = (typeof RATIO_OPTION_KEYS)[number];
export type RatioMaps = Record<RatioOptionKey, ReadonlyMap<string, number>>;

const RATIO_OF_OPTION: Record<RatioOptionKey, keyof ModelRatios> = {
  ModelRatio: 'modelRatio',
  CompletionRatio: 'completionRatio',
  CacheRatio: 'cacheRatio',
  CacheCreationRatio: 'cacheCreationRatio',
};

export const PRICE_KINDS = ['input', 'cachedInput', 'cacheWrite', 'output'] as const satisfies readonly (keyof UsdPer1M)[];
export type PriceKind = (typeof PRICE_KINDS)[number];

export const PRICE_KIND_LABELS: Record<PriceKind, string> = {
  input: 'Input',
  cachedInput: 'Cached input',
  cacheWrite: 'Cache write',
  output: 'Output',
};

/** One priced model, in USD per 1M tokens at group ratio 1. */
export interface PriceRow {
  model: string;
  prices: UsdPer1M;
}

/** A row as typed in the table: the prices are the inputs' text. */
export type PriceDraft = { model: string } & Record<PriceKind, string>;

export type DraftErrors = Partial<Record<'model' | PriceKind, string>>;

/** Every model in ModelRatio, by name, priced as the relay charges it (unset ratios at their defaults). */
export function priceRowsOf(options: OptionValues): PriceRow[] {
  const rows: PriceRow[] = [];
  for (const model of options.ModelRatio.keys()) {
    const price = ratiosOf(options, model, 'default');
    if (price) rows.push({ model, prices: pricesOfRatios(price) });
  }
  return rows.sort((a, b) => a.model.localeCompare(b.model));
}

/** A long-context tier (docs/api.md 2.11): what a whole call costs once its prompt exceeds `abovePromptTokens`. */
export interface TierRow extends PriceRow {
  abovePromptTokens: number;
}

/** Every tier of ModelRatioTiers, by model then threshold, with the model's cache ratios on top (group ratio 1). */
export function tierRowsOf(options: OptionValues): TierRow[] {
  const rows: TierRow[] = [];
  for (const [model, tiers] of options.ModelRatioTiers) {
    const price = ratiosOf(options, model, 'default');
    if (!price) continue;
    for (const tier of tiers) {
      const prices = pricesOfRatios(priceAtTier(price, tier));
      rows.push({ model, abovePromptTokens: tier.above_prompt_tokens, prices });
    }
  }
  return rows.sort((a, b) => a.model.localeCompare(b.model) || a.abovePromptTokens - b.abovePromptTokens);
}

export function draftOf(row: PriceRow): PriceDraft {
  return { model: row.model, input: String(row.prices.input), cachedInput: String(row.prices.cachedInput), cacheWrite: String(row.prices.cacheWrite), output: String(row.prices.output) };
}

/** A price as typed: a plain non-negative decimal ("0.15", "2", ".5"). */
const PRICE_TEXT = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/;

export const PRICE_MESSAGE = 'Enter a price of 0 or more, like 0.15';

/** A typed price, or undefined when it is not a plain non-negative decimal. */
export function readPrice(text: string): number | undefined {
  const trimmed = text.trim();
  return PRICE_TEXT.test(trimmed) ? Number(trimmed) : undefined;
}

/** A typed model name, or why it cannot be one: empty, invalid, or already among `otherModels`. */
export function readModelName(text: string, otherModels: ReadonlySet<string>): { model: string; error?: string } {
  const model = text.trim();
  if (model === '') return { model, error: 'Enter a model name' };
  const name = modelNameSchema.safeParse(model);
  if (!name.success) return { model, error: `Model name ${name.error.issues[0]?.message ?? 'is not valid'}` };
  if (otherModels.has(model)) return { model, error: `${model} is already in the table` };
  return { model };
}

export const ZERO_INPUT_MESSAGE =
  'Other prices are stored as multiples of the input price, so with an input price of 0 they can only be 0 too. Set an input price, or set this to 0.';

/**
 * The prices of a draft row, or what is wrong with it. `otherModels` are the names already in the
 * table (a model is priced once).
 */
export function readDraft(draft: PriceDraft, otherModels: ReadonlySet<string>): { row?: PriceRow; errors: DraftErrors } {
  const errors: DraftErrors = {};
  const { model, error } = readModelName(draft.model, otherModels);
  if (error) errors.model = error;
  const prices: Partial<UsdPer1M> = {};
  for (const kind of PRICE_KINDS) {
    const price = readPrice(draft[kind]);
    if (price === undefined) errors[kind] = PRICE_MESSAGE;
    else prices[kind] = price;
  }
  if (prices.input === 0) {
    for (const kind of PRICE_KINDS) if (kind !== 'input' && (prices[kind] ?? 0) > 0) errors[kind] = ZERO_INPUT_MESSAGE;
  }
  if (Object.keys(errors).length > 0) return { errors };
  return { row: { model, prices: prices as UsdPer1M }, errors };
}

function samePrices(a: UsdPer1M, b: UsdPer1M): boolean {
  return PRICE_KINDS.every((kind) => a[kind] === b[kind]);
}

/**
 * The four maps after editing: a model whose prices did not change keeps its stored entries as they
 * are (a ratio read back from prices could differ in its last digits); a changed or new model gets
 * an entry in each map; a model no longer in `rows` leaves every map. Entries of models that were
 * never in ModelRatio are kept untouched.
 */
export function ratioMapsOfRows(previous: OptionValues, rows: readonly PriceRow[]): RatioMaps {
  const before = new Map(priceRowsOf(previous).map((row) => [row.model, row.prices]));
  const maps = Object.fromEntries(RATIO_OPTION_KEYS.map((key) => [key, new Map(previous[key])])) as Record<RatioOptionKey, Map<string, number>>;
  const kept = new Set(rows.map((row) => row.model));
  for (const model of before.keys()) {
    if (!kept.has(model)) for (const key of RATIO_OPTION_KEYS) maps[key].delete(model);
  }
  for (const row of rows) {
    const old = before.get(row.model);
    if (old && samePrices(old, row.prices)) continue;
    const ratios = ratiosFromUsdPer1M(row.prices);
    for (const key of RATIO_OPTION_KEYS) maps[key].set(row.model, ratios[RATIO_OF_OPTION[key]]);
  }
  return maps;
}

/** A ratio map as the option's JSON text, in the form the account service stores it. */
export function ratioMapText(map: ReadonlyMap<string, number>): string {
  return JSON.stringify(Object.fromEntries(map));
}

/**
 * The options to PUT, in order: each map whose text differs from the stored one, as JSON text. The
 * relay reads the options between any two writes, so a removed model leaves ModelRatio first (it is
 * refused from then on) and an added or changed one gets its ModelRatio last, once its other ratios
 * are stored: no call is priced with half of a model's new ratios.
 */
export function changedRatioOptions(previous: OptionValues, next: RatioMaps): { key: RatioOptionKey; value: string }[] {
  const changes: { key: RatioOptionKey; value: string }[] = [];
  const withoutRemoved = new Map([...previous.ModelRatio].filter(([model]) => next.ModelRatio.has(model)));
  if (withoutRemoved.size < previous.ModelRatio.size) changes.push({ key: 'ModelRatio', value: ratioMapText(withoutRemoved) });
  for (const key of RATIO_OPTION_KEYS) {
    if (key !== 'ModelRatio' && ratioMapText(previous[key]) !== ratioMapText(next[key])) changes.push({ key, value: ratioMapText(next[key]) });
  }
  const storedModelRatio = changes[0]?.key === 'ModelRatio' ? changes[0].value : ratioMapText(previous.ModelRatio);
  if (ratioMapText(next.ModelRatio) !== storedModelRatio) changes.push({ key: 'ModelRatio', value: ratioMapText(next.ModelRatio) });
  return changes;
}
