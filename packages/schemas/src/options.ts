import { z } from 'zod';
import { isReservedName, RESERVED_NAME_MESSAGE } from './names';
import { publicAddressText } from './public-address';

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

/** A map option's object, from its JSON text or the object itself; undefined (issue added) otherwise. */
function jsonObjectOf(value: unknown, ctx: z.RefinementCtx, shape: string): object | undefined {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON text' });
      return undefined;
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    ctx.addIssue({ code: 'custom', message: shape });
    return undefined;
  }
  return parsed;
}

/**
 * A JSON object of name -> ratio, as its JSON text or the object itself, read into a Map: a model or
 * group named like an Object.prototype member (`constructor`) then reads as absent, never as an
 * inherited function. Stored maps keep such keys harmlessly; `normalizeOptionValue` refuses them.
 */
const ratioMapOption = z.unknown().transform((value, ctx) => {
  const parsed = jsonObjectOf(value, ctx, 'must be a JSON object of name -> non-negative number');
  if (parsed === undefined) return z.NEVER;
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

/** One group's limits in GroupRateLimit (docs/api.md 3.8); 0 or absent = none. */
export interface GroupLimits {
  rpm: number;
  tpm: number;
  concurrency: number;
}

const limitSchema = z.number().int().min(0).max(2 ** 31 - 1).default(0);
const groupLimitsSchema = z.strictObject({ rpm: limitSchema, tpm: limitSchema, concurrency: limitSchema });

/** GroupRateLimit: a JSON object of group -> {rpm, tpm, concurrency}, read into a Map. */
const groupLimitsOption = z.unknown().transform((value, ctx) => {
  const parsed = jsonObjectOf(value, ctx, 'must be a JSON object of group -> {rpm, tpm, concurrency}');
  if (parsed === undefined) return z.NEVER;
  const limits = new Map<string, GroupLimits>();
  for (const [group, entry] of Object.entries(parsed)) {
    const read = groupLimitsSchema.safeParse(entry);
    if (group === '' || !read.success) {
      ctx.addIssue({ code: 'custom', message: `entry ${JSON.stringify(group)} must map a group to {rpm, tpm, concurrency} (integers >= 0)` });
      return z.NEVER;
    }
    limits.set(group, read.data);
  }
  return limits as ReadonlyMap<string, GroupLimits>;
});

const nonNegativeInt = integerOption(0, Number.MAX_SAFE_INTEGER);
const positiveInt = integerOption(1, Number.MAX_SAFE_INTEGER);

/**
 * One long-context tier of a model (docs/api.md 2.11): a call whose prompt tokens exceed
 * `above_prompt_tokens` is priced whole at these ratios instead of ModelRatio / CompletionRatio.
 * Kept in the option's own spelling, so the parsed map is stored back as it was written.
 */
export interface ModelRatioTier {
  above_prompt_tokens: number;
  model_ratio: number;
  completion_ratio: number;
}

const ratioSchema = z.number().finite().nonnegative();
const tierSchema = z.strictObject({
  above_prompt_tokens: z.number().int().positive().max(2 ** 31 - 1),
  model_ratio: ratioSchema,
  completion_ratio: ratioSchema,
});

/**
 * ModelRatioTiers: a JSON object of model -> tiers, as its JSON text or the object itself, read into
 * a Map of tiers sorted by threshold (no threshold twice for one model).
 */
const ratioTiersOption = z.unknown().transform((value, ctx) => {
  const parsed = jsonObjectOf(value, ctx, 'must be a JSON object of model -> [{above_prompt_tokens, model_ratio, completion_ratio}]');
  if (parsed === undefined) return z.NEVER;
  const tiers = new Map<string, readonly ModelRatioTier[]>();
  for (const [model, list] of Object.entries(parsed)) {
    const read = z.array(tierSchema).min(1).safeParse(list);
    if (model === '' || !read.success) {
      ctx.addIssue({
        code: 'custom',
        message: `entry ${JSON.stringify(model)} must map a model to a non-empty list of {above_prompt_tokens (integer > 0), model_ratio, completion_ratio (numbers >= 0)}`,
      });
      return z.NEVER;
    }
    const sorted = [...read.data].sort((a, b) => a.above_prompt_tokens - b.above_prompt_tokens);
    if (sorted.some((tier, i) => i > 0 && tier.above_prompt_tokens === sorted[i - 1]!.above_prompt_tokens)) {
      ctx.addIssue({ code: 'custom', message: `entry ${JSON.stringify(model)} names a threshold twice` });
      return z.NEVER;
    }
    tiers.set(model, sorted);
  }
  return tiers as ReadonlyMap<string, readonly ModelRatioTier[]>;
});

/*
 * Default prices (docs/api.md 2.5, 2.11), from the providers' pricing pages as checked on 2026-11-25
 * (developers.openai.com/api/docs/pricing, platform.claude.com/docs/en/about-claude/pricing,
 * ai.google.dev/gemini-api/docs/pricing). ModelRatio = USD per 1M input tokens / 2 (ratio 1 = USD 2
 * per 1M tokens); CompletionRatio = output price / input price; CacheRatio = cached input price /
 * input price; CacheCreationRatio = cache-write price / input price. They apply until root stores a
 * map of its own for the option (a stored map replaces the default whole).
 */
export const DEFAULT_MODEL_RATIO: Record<string, number> = {
  'gpt-3.5-turbo-instruct': 0.75,
  'davinci-002': 1,
  'babbage-002': 0.2,
  // OpenAI chat, USD per 1M input / output: gpt-4o 2.50 / 10, gpt-4o-mini 0.15 / 0.60, gpt-4.1 2 / 8,
  // gpt-4.1-mini 0.40 / 1.60, gpt-4.1-nano 0.10 / 0.40, gpt-5 1.25 / 10, gpt-5-mini 0.25 / 2,
  // gpt-5-nano 0.05 / 0.40, o3 2 / 8, o4-mini 1.10 / 4.40.
  'gpt-4o-mini': 0.075,
  'gpt-4o': 1.25,
  'gpt-4.1': 1,
  'gpt-4.1-mini': 0.2,
  'gpt-4.1-nano': 0.05,
  'gpt-5': 0.625,
  'gpt-5-mini': 0.125,
  'gpt-5-nano': 0.025,
  o3: 1,
  'o4-mini': 0.55,
  // OpenAI embeddings, USD per 1M input: 0.02, 0.13, 0.10.
  'text-embedding-3-small': 0.01,
  'text-embedding-3-large': 0.065,
  'text-embedding-ada-002': 0.05,
  // Anthropic, by alias and by snapshot id (Claude Code sends snapshot ids), USD per 1M input / output:
  // Opus 4.1 15 / 75, Opus 4.5 5 / 25, Sonnet 4.5 and 4 3 / 15, Haiku 4.5 1 / 5, Haiku 3.5 0.80 / 4.
  'claude-opus-4-1': 7.5,
  'claude-opus-4-1-20250805': 7.5,
  'claude-opus-4-5': 2.5,
  'claude-opus-4-5-20251101': 2.5,
  'claude-sonnet-4-5': 1.5,
  'claude-sonnet-4-5-20250929': 1.5,
  'claude-sonnet-4-0': 1.5,
  'claude-sonnet-4-20250514': 1.5,
  'claude-haiku-4-5': 0.5,
  'claude-haiku-4-5-20251001': 0.5,
  'claude-3-5-haiku-latest': 0.4,
  'claude-3-5-haiku-20241022': 0.4,
  // Gemini, USD per 1M input / output (2.5 Pro: prompts up to 200K tokens): 2.5 Pro 1.25 / 10,
  // 2.5 Flash 0.30 / 2.50, 2.5 Flash-Lite 0.10 / 0.40, 2.0 Flash 0.10 / 0.40.
  'gemini-2.0-flash': 0.05,
  'gemini-2.5-flash': 0.15,
  'gemini-2.5-flash-lite': 0.05,
  'gemini-2.5-pro': 0.625,
  'gemini-2.5-flash-preview-tts': 0.25,
  'gemini-2.5-pro-preview-tts': 0.5,
  // Gemini embeddings: gemini-embedding-001 USD 0.15 per 1M input; text-embedding-004 is free on the
  // Gemini API and about USD 0.10 per 1M tokens on Vertex AI (USD 0.025 per 1M characters).
  'gemini-embedding-001': 0.075,
  'text-embedding-004': 0.05,
  // Media models that report tokens (docs/api.md 2.14), USD per 1M input / output: gpt-image-1 text
  // 5 / image 40, gpt-image-1-mini 2 / 8, gpt-4o-transcribe audio 6 / text 10, gpt-4o-mini-transcribe
  // 3 / 5, gpt-4o-mini-tts text 0.60 / audio 12, gemini-2.5-flash-image 0.30 / image 30,
  // gemini-3-pro-image-preview 2 / image 120.
  'gpt-image-1': 2.5,
  'gpt-image-1-mini': 1,
  'gpt-4o-transcribe': 3,
  'gpt-4o-mini-transcribe': 1.5,
  'gpt-4o-mini-tts': 0.3,
  'gemini-2.5-flash-image': 0.15,
  'gemini-3-pro-image-preview': 1,
};

export const DEFAULT_COMPLETION_RATIO: Record<string, number> = {
  'gpt-3.5-turbo-instruct': 1.333333,
  'gpt-4o-mini': 4,
  'gpt-4o': 4,
  'gpt-4.1': 4,
  'gpt-4.1-mini': 4,
  'gpt-4.1-nano': 4,
  'gpt-5': 8,
  'gpt-5-mini': 8,
  'gpt-5-nano': 8,
  o3: 4,
  'o4-mini': 4,
  'claude-opus-4-1': 5,
  'claude-opus-4-1-20250805': 5,
  'claude-opus-4-5': 5,
  'claude-opus-4-5-20251101': 5,
  'claude-sonnet-4-5': 5,
  'claude-sonnet-4-5-20250929': 5,
  'claude-sonnet-4-0': 5,
  'claude-sonnet-4-20250514': 5,
  'claude-haiku-4-5': 5,
  'claude-haiku-4-5-20251001': 5,
  'claude-3-5-haiku-latest': 5,
  'claude-3-5-haiku-20241022': 5,
  'gemini-2.0-flash': 4,
  'gemini-2.5-flash': 8.333333,
  'gemini-2.5-flash-lite': 4,
  'gemini-2.5-pro': 8,
  'gemini-2.5-flash-preview-tts': 20,
  'gemini-2.5-pro-preview-tts': 20,
  'gpt-image-1': 8,
  'gpt-image-1-mini': 4,
  'gpt-4o-transcribe': 1.666667,
  'gpt-4o-mini-transcribe': 1.666667,
  'gpt-4o-mini-tts': 20,
  'gemini-2.5-flash-image': 100,
  'gemini-3-pro-image-preview': 60,
};

/**
 * Prices per unit (docs/api.md 2.14, new-api's ModelPrice), USD, for calls no tokens are reported
 * for; the unit is the surface's: an image (dall-e-3 USD 0.04 at 1024x1024 standard, dall-e-2 USD
 * 0.02), 1,000 characters of speech (tts-1 USD 15 and tts-1-hd USD 30 per 1M characters,
 * gpt-4o-mini-tts about USD 0.015 a minute), a minute of audio (whisper-1 USD 0.006; OpenAI's
 * estimates per minute for the gpt-4o transcribe models, used when an answer reports no tokens),
 * a rerank request (Cohere USD 2 per 1,000 searches).
 */
export const DEFAULT_MODEL_PRICE: Record<string, number> = {
  'dall-e-3': 0.04,
  'dall-e-2': 0.02,
  'tts-1': 0.015,
  'tts-1-hd': 0.03,
  'gpt-4o-mini-tts': 0.015,
  'whisper-1': 0.006,
  'gpt-4o-transcribe': 0.006,
  'gpt-4o-mini-transcribe': 0.003,
  'rerank-v3.5': 0.002,
  'rerank-english-v3.0': 0.002,
  'rerank-multilingual-v3.0': 0.002,
};

/**
 * Cached prompt tokens (docs/api.md 2.11): OpenAI cached input is 1/2 of input for gpt-4o, 1/4 for
 * gpt-4.1, o3 and o4-mini, 1/10 for gpt-5; Anthropic cache hits 1/10; Gemini 2.5 cached input 1/10
 * (the earlier 1/4 was cut), 2.0 Flash 1/4. Models without an entry pay the full input price.
 */
export const DEFAULT_CACHE_RATIO: Record<string, number> = {
  'gpt-4o-mini': 0.5,
  'gpt-4o': 0.5,
  'gpt-4.1': 0.25,
  'gpt-4.1-mini': 0.25,
  'gpt-4.1-nano': 0.25,
  'gpt-5': 0.1,
  'gpt-5-mini': 0.1,
  'gpt-5-nano': 0.1,
  o3: 0.25,
  'o4-mini': 0.25,
  'claude-opus-4-1': 0.1,
  'claude-opus-4-1-20250805': 0.1,
  'claude-opus-4-5': 0.1,
  'claude-opus-4-5-20251101': 0.1,
  'claude-sonnet-4-5': 0.1,
  'claude-sonnet-4-5-20250929': 0.1,
  'claude-sonnet-4-0': 0.1,
  'claude-sonnet-4-20250514': 0.1,
  'claude-haiku-4-5': 0.1,
  'claude-haiku-4-5-20251001': 0.1,
  'claude-3-5-haiku-latest': 0.1,
  'claude-3-5-haiku-20241022': 0.1,
  'gemini-2.0-flash': 0.25,
  'gemini-2.5-flash': 0.1,
  'gemini-2.5-flash-lite': 0.1,
  'gemini-2.5-pro': 0.1,
};

/** docs/api.md 2.11: the CacheCreationRatio of an Anthropic (`claude-*`) model the map does not name. */
export const ANTHROPIC_CACHE_CREATION_RATIO = 1.25;

/**
 * Cache-write prompt tokens (docs/api.md 2.11): Anthropic's 5-minute cache writes cost 1.25 x input.
 * A `claude-*` model without an entry is priced the same way; other models pay the input price.
 */
export const DEFAULT_CACHE_CREATION_RATIO: Record<string, number> = Object.fromEntries(
  Object.keys(DEFAULT_MODEL_RATIO)
    .filter((model) => model.startsWith('claude-'))
    .map((model) => [model, ANTHROPIC_CACHE_CREATION_RATIO]),
);

/** Where the providers' long-context prices start: prompts above 200K tokens. */
const LONG_CONTEXT_TOKENS = 200_000;

/**
 * Long-context tiers (docs/api.md 2.11), from the same pricing pages: Claude Sonnet 4 and 4.5 with
 * the 1M-token context beta charge USD 6 / 22.50 per 1M input / output tokens above 200K prompt
 * tokens (3 / 15 below); Gemini 2.5 Pro USD 2.50 / 15 (1.25 / 10 below). The cache ratios apply on
 * top, as the providers price cached input and cache writes of such prompts.
 */
const SONNET_LONG_CONTEXT: ModelRatioTier[] = [{ above_prompt_tokens: LONG_CONTEXT_TOKENS, model_ratio: 3, completion_ratio: 3.75 }];
export const DEFAULT_MODEL_RATIO_TIERS: Record<string, ModelRatioTier[]> = {
  'claude-sonnet-4-5': SONNET_LONG_CONTEXT,
  'claude-sonnet-4-5-20250929': SONNET_LONG_CONTEXT,
  'claude-sonnet-4-0': SONNET_LONG_CONTEXT,
  'claude-sonnet-4-20250514': SONNET_LONG_CONTEXT,
  'gemini-2.5-pro': [{ above_prompt_tokens: LONG_CONTEXT_TOKENS, model_ratio: 1.25, completion_ratio: 6 }],
};

/**
 * Server tools (docs/api.md 2.14), USD per call, as the providers bill them: Anthropic web search
 * USD 10 per 1,000 searches, web fetch free (its pages are input tokens); OpenAI `web_search` USD
 * 10 per 1,000 calls, `web_search_preview` (and the chat search models) USD 25 per 1,000 for
 * non-reasoning models (10 for reasoning ones: the higher is charged), `file_search` USD 2.50 per
 * 1,000 calls, remote MCP free; Anthropic tool search and MCP toolsets free; Gemini grounding with
 * Google Search USD 35 per 1,000 grounded prompts, URL context and code execution free (tokens only). Tools billed otherwise (Anthropic code execution and OpenAI
 * `code_interpreter` by container time, OpenAI `image_generation` by image) have no price, so
 * requests offering them are refused until root sets one.
 */
export const DEFAULT_TOOL_PRICE: Record<string, number> = {
  web_search: 0.01,
  web_fetch: 0,
  tool_search_tool_regex: 0,
  tool_search_tool_bm25: 0,
  mcp_toolset: 0,
  web_search_preview: 0.025,
  file_search: 0.0025,
  mcp: 0,
  googleSearch: 0.035,
  googleSearchRetrieval: 0.035,
  urlContext: 0,
  codeExecution: 0,
};

export const OPTION_DEFINITIONS = {
  QuotaPerUnit: { schema: positiveInt, default: '500000', secret: false },
  ModelRatio: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_MODEL_RATIO), secret: false },
  CompletionRatio: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_COMPLETION_RATIO), secret: false },
  CacheRatio: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_CACHE_RATIO), secret: false },
  CacheCreationRatio: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_CACHE_CREATION_RATIO), secret: false },
  ModelRatioTiers: { schema: ratioTiersOption, default: JSON.stringify(DEFAULT_MODEL_RATIO_TIERS), secret: false },
  ModelPrice: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_MODEL_PRICE), secret: false },
  ToolPrice: { schema: ratioMapOption, default: JSON.stringify(DEFAULT_TOOL_PRICE), secret: false },
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
  // Seeded from PUBLIC_URL on first start; this default only stands in for a missing or corrupt row.
  // Stored as the parser prints it, so `HTTPS://Example.com` reads back as `https://example.com`.
  ServerAddress: { schema: publicAddressText, default: 'http://127.0.0.1:3000', secret: false },
  // Mail (docs/api.md 3.8), new-api's names; no SMTPServer = no mail is sent.
  SMTPServer: { schema: stringOption, default: '', secret: false },
  SMTPPort: { schema: integerOption(1, 65535), default: '587', secret: false },
  SMTPAccount: { schema: stringOption, default: '', secret: false },
  SMTPToken: { schema: stringOption, default: '', secret: true },
  SMTPFrom: { schema: stringOption, default: '', secret: false },
  /** true: TLS from the first byte (port 465); false: STARTTLS when the server offers it. */
  SMTPSSLEnabled: { schema: booleanOption, default: 'false', secret: false },
  EmailVerificationEnabled: { schema: booleanOption, default: 'false', secret: false },
  OIDCEnabled: { schema: booleanOption, default: 'false', secret: false },
  OIDCIssuer: { schema: stringOption, default: '', secret: false },
  OIDCClientId: { schema: stringOption, default: '', secret: false },
  OIDCClientSecret: { schema: stringOption, default: '', secret: true },
  GroupRateLimit: { schema: groupLimitsOption, default: '{}', secret: false },
  WebhookAllowPrivate: { schema: booleanOption, default: 'false', secret: false },
  /** Days of `logs` kept; older whole months are dropped by the worker (0 = keep all). Usage aggregates stay. */
  LogRetentionDays: { schema: integerOption(0, 36_500), default: '0', secret: false },
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
