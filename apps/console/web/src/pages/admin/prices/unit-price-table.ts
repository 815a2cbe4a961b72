import type { OptionValues } from '@modelgate/schemas/options';
import { PRICE_MESSAGE, ratioMapText, readModelName, readPrice } from './price-table';

/** One model priced per unit (option ModelPrice, docs/api.md 2.14): USD per unit at group ratio 1. */
export interface UnitPriceRow {
  model: string;
  usd: number;
}

/** A row as typed: the price is the input's text. */
export interface UnitPriceDraft {
  model: string;
  usd: string;
}

export type UnitDraftErrors = Partial<Record<keyof UnitPriceDraft, string>>;

/** Every model of ModelPrice, by name. */
export function unitPriceRowsOf(options: OptionValues): UnitPriceRow[] {
  return [...options.ModelPrice]
    .map(([model, usd]) => ({ model, usd }))
    .sort((a, b) => a.model.localeCompare(b.model));
}

export function unitDraftOf(row: UnitPriceRow): UnitPriceDraft {
  return { model: row.model, usd: String(row.usd) };
}

/** The price of a draft row, or what is wrong with it; `otherModels` are the names already in the table. */
export function readUnitDraft(draft: UnitPriceDraft, otherModels: ReadonlySet<string>): { row?: UnitPriceRow; errors: UnitDraftErrors } {
  const errors: UnitDraftErrors = {};
  const { model, error } = readModelName(draft.model, otherModels);
  if (error) errors.model = error;
  const usd = readPrice(draft.usd);
  if (usd === undefined) errors.usd = PRICE_MESSAGE;
  if (usd === undefined || error) return { errors };
  return { row: { model, usd }, errors };
}

/**
 * The ModelPrice option to PUT for the edited table, or undefined when it reads back as the stored
 * map: stored models keep their place, added ones follow, removed ones leave.
 */
export function changedModelPriceOption(previous: OptionValues, rows: readonly UnitPriceRow[]): { key: 'ModelPrice'; value: string } | undefined {
  const next = new Map<string, number>();
  const typed = new Map(rows.map((row) => [row.model, row.usd]));
  for (const model of previous.ModelPrice.keys()) {
    const usd = typed.get(model);
    if (usd !== undefined) next.set(model, usd);
  }
  for (const [model, usd] of typed) next.set(model, usd);
  const value = ratioMapText(next);
  return value === ratioMapText(previous.ModelPrice) ? undefined : { key: 'ModelPrice', value };
}
