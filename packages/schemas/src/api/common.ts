import { z } from 'zod';
import { unreservedName } from '../names';

/** Body ids, up to 2,147,483,647 (docs/api.md 1.1). */
export const idField = z.number().int().positive().max(2_147_483_647);
/** A path id: anything else answers 404 like an unknown id (docs/api.md 1.1). */
export const idPathParams = z.object({ id: z.string().regex(/^[1-9][0-9]{0,9}$/) });
/** A quota amount: an integer up to 2^53 - 1. */
export const quotaField = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** The largest unix time accepted: the end of the year 9999. */
export const MAX_UNIX_TIME = 253_402_300_799;
/** A unix time in seconds as a query parameter, up to the year 9999 (docs/api.md 1.1). */
export const unixTimeParam = z.coerce.number().int().min(0).max(MAX_UNIX_TIME);
/** A unix time in an answer; `null` where there is none. */
export const unixTime = z.number().int();
export const optionalUnixTime = unixTime.nullable();

export const usernameSchema = z.string().regex(/^[A-Za-z0-9_]{3,20}$/, '3 to 20 letters, digits or _');
export const passwordSchema = z.string().min(8).max(64);
export const emailSchema = z.email().max(100);
export const displayNameSchema = z.string().max(20);
/** A user group name, as used in channels' `groups` and the GroupRatio option. */
export const groupSchema = unreservedName(z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, '1 to 32 letters, digits, _ or -'));
/** A model name, as in channels' `models` and keys' `model_limits`. */
export const modelNameSchema = unreservedName(z.string().max(200));

/** Comma-separated names, trimmed, empties and repeats dropped, stored joined by ','; '' only when not `required`. */
export const commaList = (item: z.ZodType<string, string>, what: string, required = true) =>
  z
    .string()
    .max(20_000)
    .transform((text) => text.split(',').map((entry) => entry.trim()).filter(Boolean))
    .pipe(z.array(item).min(required ? 1 : 0, `at least one ${what}`))
    .transform((entries) => [...new Set(entries)].join(','));

/** The highest `p` of a page: with `page_size` 100, rows up to 100 million deep are reachable. */
export const MAX_PAGE = 1_000_000;
const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 10;

/** A decimal integer from `min` to `max`; an empty parameter counts as absent. */
const pageNumber = (min: number, max: number, fallback: number) =>
  z
    .string()
    .describe(`an integer from ${min} to ${max}, default ${fallback}`)
    .optional()
    .transform((text, ctx) => {
      if (text === undefined || text === '') return fallback;
      const value = /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
      if (!(value >= min && value <= max)) {
        ctx.addIssue({ code: 'custom', message: `must be an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return value;
    });

/** Pagination query of docs/api.md 1.1: `p` from 1 to MAX_PAGE, `page_size` from 1 to 100 (default 10). */
export const pageQuery = z.object({
  p: pageNumber(1, MAX_PAGE, 1),
  page_size: pageNumber(1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE),
});

/** A page of a list (docs/api.md 1.1), newest first. */
export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({ page: z.number().int(), page_size: z.number().int(), total: z.number().int(), items: z.array(item) });

/** `data: null`: the operation answers only success or failure. */
export const noData = z.null();
/** A body that must be an empty object when sent. */
export const emptyBody = z.strictObject({});
