import { z } from 'zod';

/**
 * Runtime options (CONTRACT 3.4): stored as text in the `options` table, written by the account
 * service, read (and cached) by the relay and worker. Each entry parses the stored text.
 */
const nonNegativeInt = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const positiveInt = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const ratioMap = z.record(z.string().min(1), z.number().min(0));
const jsonText = <S extends z.ZodType>(schema: S) =>
  z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON text' });
      return z.NEVER;
    }
  }).pipe(schema);
const booleanText = z.enum(['true', 'false']).transform((v) => v === 'true');

/** Default prices: model ratio 1 = USD 0.002 / 1K tokens (CONTRACT 2.5). */
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
  ModelRatio: { schema: jsonText(ratioMap), default: JSON.stringify(DEFAULT_MODEL_RATIO), secret: false },
  CompletionRatio: { schema: jsonText(ratioMap), default: JSON.stringify(DEFAULT_COMPLETION_RATIO), secret: false },
  GroupRatio: { schema: jsonText(ratioMap), default: JSON.stringify({ default: 1, vip: 1, svip: 1 }), secret: false },
  RetryTimes: { schema: z.coerce.number().int().min(0).max(10), default: '2', secret: false },
  QuotaForNewUser: { schema: nonNegativeInt, default: '0', secret: false },
  QuotaForInviter: { schema: nonNegativeInt, default: '0', secret: false },
  QuotaForInvitee: { schema: nonNegativeInt, default: '0', secret: false },
  RegisterEnabled: { schema: booleanText, default: 'true', secret: false },
  StripeApiSecret: { schema: z.string(), default: '', secret: true },
  StripeWebhookSecret: { schema: z.string(), default: '', secret: true },
  StripePriceId: { schema: z.string(), default: '', secret: false },
  StripeUnitPrice: { schema: z.coerce.number().min(0), default: '1', secret: false },
  StripeMinTopUp: { schema: positiveInt, default: '1', secret: false },
} as const;

export type OptionKey = keyof typeof OPTION_DEFINITIONS;
export type OptionValues = { [K in OptionKey]: z.output<(typeof OPTION_DEFINITIONS)[K]['schema']> };
export const OPTION_KEYS = Object.keys(OPTION_DEFINITIONS) as OptionKey[];

export function isOptionKey(key: string): key is OptionKey {
  return Object.hasOwn(OPTION_DEFINITIONS, key);
}

/**
 * Turns what a client sent (text, or a JSON number / boolean / object) into the stored text form
 * and validates it; throws a message naming the problem.
 */
export function normalizeOptionValue(key: OptionKey, value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined) throw new Error(`${key}: value is required`);
  const parsed = OPTION_DEFINITIONS[key].schema.safeParse(text);
  if (!parsed.success) throw new Error(`${key}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
  return text;
}

/** Parses stored rows into typed values, falling back to defaults for missing or corrupt rows. */
export function parseOptions(rows: Iterable<{ key: string; value: string }>): OptionValues {
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
