import { z } from 'zod';

/** A unix time in seconds as a query parameter, up to the year 9999 (docs/api.md 1.1). */
export const unixTimeParam = z.coerce.number().int().min(0).max(253_402_300_799);

/** The query without its empty parameters: `?model_name=` means "not filtered", as new-api's UI sends them. */
export function presentParams(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== '' && value !== undefined));
}
