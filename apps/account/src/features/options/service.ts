import { AppError } from '@modelgate/errors';
import { isOptionKey, normalizeOptionValue, OPTION_DEFINITIONS, OPTION_KEYS, type OptionKey, readOptionRows } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { publishInvalidation } from '../../lib/invalidation';
import { insertMissingOptions, upsertOption } from './repository';

/** Every option with its stored (or default) text; secret options are left out entirely. */
export async function listOptions(deps: AccountDeps): Promise<{ key: string; value: string }[]> {
  const stored = new Map((await readOptionRows(deps.prisma)).map((row) => [row.key, row.value]));
  return OPTION_KEYS.filter((key) => !OPTION_DEFINITIONS[key].secret).map((key) => ({
    key,
    value: stored.get(key) ?? OPTION_DEFINITIONS[key].default,
  }));
}

export async function updateOption(deps: AccountDeps, key: string, value: unknown): Promise<{ key: OptionKey }> {
  if (!isOptionKey(key)) throw new AppError('invalid_request', `key: unknown option "${key}"`, { param: 'key' });
  let text: string;
  try {
    text = normalizeOptionValue(key, value);
  } catch (err) {
    throw new AppError('invalid_request', `value: ${(err as Error).message}`, { param: 'value' });
  }
  await upsertOption(deps.prisma, key, text);
  await publishInvalidation(deps, { kind: 'options' });
  return { key };
}

/** Environment variables that seed an option on first start (never overwrite an option set through the API). */
const SEEDED_FROM_ENV = {
  STRIPE_API_SECRET: 'StripeApiSecret',
  STRIPE_WEBHOOK_SECRET: 'StripeWebhookSecret',
  STRIPE_PRICE_ID: 'StripePriceId',
  // Always set (its default is the local edge): links work from the first start, and root may change it.
  PUBLIC_URL: 'ServerAddress',
} as const satisfies Partial<Record<keyof AccountDeps['env'], OptionKey>>;

export async function seedOptionsFromEnv(deps: AccountDeps): Promise<OptionKey[]> {
  const entries: { key: OptionKey; value: string }[] = [];
  for (const [envName, key] of Object.entries(SEEDED_FROM_ENV) as [keyof typeof SEEDED_FROM_ENV, OptionKey][]) {
    const value = deps.env[envName];
    if (value) entries.push({ key, value: normalizeOptionValue(key, value) });
  }
  const inserted = await insertMissingOptions(deps.prisma, entries);
  if (inserted.length > 0) await publishInvalidation(deps, { kind: 'options' });
  return inserted;
}
