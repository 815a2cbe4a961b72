import { z } from 'zod';
import { isReservedName, RESERVED_NAME_MESSAGE } from './names';

/**
 * Runtime options (docs/api.md 3.4): stored as text in the `options` table, written by the account
 * service, read (and cached) by the relay and worker. Each entry parses the stored text.
 */
const DECIMAL_INTEGER = /^[0-9]+$/;
const DECIMAL_NUMBER = /^[0-9]+(\.[0-9]+)?$/;

/**
 * Each option's schema reads the stored text and also what a client may send (docs/api.md 3.4): a
 * JSON number, boolean or object is accepted wherever its text form would be.
 */
function integerOption(min: number, max: number) {
  return z.unknown().transform((value, ctx) => {
    const parsed = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL_INTEGER.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(parsed)) {
      ctx.addIssue({ code: 'custom', message: 'must be a decimal integer' });
      return z.NEVER;
    }
    if (parsed < min || parsed > max) {
      ctx.addIssue({ code: 'custom', message: `must be from ${min} to ${max}` });
      return z.NEVER;
    }
    return parsed;
  });
}

/** A non-negative decimal without exponent ('1', '0.25'), so that its stored text reads back the same. */
const decimalOption = z.unknown().transform((value, ctx) => {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL_NUMBER.test(value) ? Number(value) : NaN;
  if (!(parsed >= 0 && parsed <= 1_000_000) || !DECIMAL_NUMBER.test(String(parsed))) {
    ctx.addIssue({ code: 'custom', message: 'must be a decimal number from 0 to 1000000, without exponent' });
    return z.NEVER;
  }
  return parsed;
});

const booleanOption = z.unknown().transform((value, ctx) => {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  ctx.addIssue({ code: 'custom', message: 'must be true or false' });
  return z.NEVER;
});

const stringOption = z.string({ error: 'must be a string' });

/**
 * A JSON object of name -> ratio, as its JSON text or the object itself, read into a Map: a model or
 * group named like an Object.prototype member (`constructor`) then reads as absent, never as an
 * inherited function. Stored maps keep such keys harmlessly; `normalizeOptionValue` refuses them.
 */
const ratioMapOption = z.unknown().transform((value, ctx) => {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON text' });
      return z.NEVER;
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object of name -> non-negative number' });
    return z.NEVER;
  }
  const ratios = new Map<string, number>();
  for (const [name, ratio] of Object.entries(parsed)) {
    if (name === '' || typeof ratio !== 'number' || !Number.isFinite(ratio) || ratio < 0) {
      ctx.addIssue({ code: 'custom', message: `entry ${JSON.stringify(name)} must map a name to a non-negative number` });
      return z.NEVER;
    }
    ratios.set(name, ratio);
  }
  return ratios as ReadonlyMap<string, number>;
});

const nonNegativeInt = integerOption(0, Number.MAX_SAFE_INTEGER);
const positiveInt = integerOption(1, Number.MAX_SAFE_INTEGER);

/** Default prices: model ratio 1 = USD 0.002 / 1K tokens (docs/api.md 2.5). */
export const DEFAULT_MODEL_RATIO: Record<string, number> = {
  'gpt-3.5-turbo-instruct': 0.75,
  'davinci-002': 1,
  'babbage-002': 0.2,
  'gpt-4o-mini': 0.075,
  'gpt-4o': 1.25,
  'gemini-2.0-flash': 0.05,
  'gemini-2.5-flash': 0.15,
  'gemini-2.5-pro': 0.625,
  'gemini-2.5-flash-preview-tts': 0.25,
  'gemini-2.5-pro-preview-tts': 0.5,
};

export const DEFAULT_COMPLETION_RATIO: Record<string, number> = {
  'gpt-3.5-turbo-instruct': 1.333333,
  'gpt-4o-mini': 4,
  'gpt-4o': 4,
  'gemini-2.0-flash': 4,
  'gemini-2.5-flash': 8.333333,
  'gemini-2.5-pro': 8,
  'gemini-2.5-flash-preview-tts': 20,
  'gemini-2.5-pro-preview-tts': 20,
};

export const OPTION_DEFINITIONS = {
  QuotaPerUnit: { schema: positiveInt, default: '500000', secret: false },
  ModelRatio: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_MODEL_RATIO), secret: false },
  CompletionRatio: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_COMPLETION_RATIO), secret: false },
  GroupRatio: { schema: ratioMapOption, default: JSON.stringify({ default: 1, vip: 1, svip: 1 }), secret: false },
  RetryTimes: { schema: integerOption(0, 10), default: '2', secret: false },
  QuotaForNewUser: { schema: nonNegativeInt, default: '0', secret: false },
  QuotaForInviter: { schema: nonNegativeInt, default: '0', secret: false },
  QuotaForInvitee: { schema: nonNegativeInt, default: '0', secret: false },
  RegisterEnabled: { schema: booleanOption, default: 'true', secret: false },
  StripeApiSecret: { schema: stringOption, default: '', secret: true },
  StripeWebhookSecret: { schema: stringOption, default: '', secret: true },
  StripePriceId: { schema: stringOption, default: '', secret: false },
  StripeUnitPrice: { schema: decimalOption, default: '1', secret: false },
  StripeMinTopUp: { schema: positiveInt, default: '1', secret: false },
} as const;

export type OptionKey = keyof typeof OPTION_DEFINITIONS;
export type OptionValues = { [K in OptionKey]: z.output<(typeof OPTION_DEFINITIONS)[K]['schema']> };
export const OPTION_KEYS = Object.keys(OPTION_DEFINITIONS) as OptionKey[];

export function isOptionKey(key: string): key is OptionKey {
  return Object.hasOwn(OPTION_DEFINITIONS, key);
}

/**
 * Turns what a client sent (text, or a JSON number / boolean / object) into the stored text form,
 * normalised ('007' and 7 are both stored as '7'); throws a message naming the key and the problem.
 * A ratio map may not name a model or group after an Object.prototype member.
 */
export function normalizeOptionValue(key: OptionKey, value: unknown): string {
  if (value === undefined) throw new Error(`${key}: value is required`);
  const parsed = OPTION_DEFINITIONS[key].schema.safeParse(value);
  if (!parsed.success) throw new Error(`${key}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
  const data: unknown = parsed.data;
  if (data instanceof Map) {
    const reserved = [...data.keys()].find((name: string) => isReservedName(name));
    if (reserved !== undefined) throw new Error(`${key}: key ${JSON.stringify(reserved)} ${RESERVED_NAME_MESSAGE}`);
    return JSON.stringify(Object.fromEntries(data));
  }
  return typeof data === 'string' ? data : String(data);
}

/** Parses stored rows into typed values, falling back to defaults for missing or corrupt rows. */
export function parseOptions(rows: Iterable<OptionRow>): OptionValues {
  const stored = new Map<string, string>();
  for (const row of rows) stored.set(row.key, row.value);
  const out: Record<string, unknown> = {};
  for (const key of OPTION_KEYS) {
    const def = OPTION_DEFINITIONS[key];
    const parsed = def.schema.safeParse(stored.get(key) ?? def.default);
    out[key] = parsed.success ? parsed.data : def.schema.parse(def.default);
  }
  return out as OptionValues;
}

export interface OptionRow {
  key: string;
  value: string;
}

/** What reading the options needs of a Prisma client or transaction (this package stays free of the database). */
export interface OptionTable {
  option: { findMany(args: { select: { key: true; value: true } }): Promise<OptionRow[]> };
}

export function readOptionRows(db: OptionTable): Promise<OptionRow[]> {
  return db.option.findMany({ select: { key: true, value: true } });
}

/** The current options, typed, defaults filled in. */
export async function readOptions(db: OptionTable): Promise<OptionValues> {
  return parseOptions(await readOptionRows(db));
}
