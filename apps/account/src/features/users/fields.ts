import { unreservedName } from '@modelgate/schemas';
import { z } from 'zod';

export const usernameSchema = z.string().regex(/^[A-Za-z0-9_]{3,20}$/, '3 to 20 letters, digits or _');
export const passwordSchema = z.string().min(8).max(64);
export const emailSchema = z.email().max(100);
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

export const AFF_CODE_LENGTH = 8;
