import { ADMIN_LIMIT_FIELDS, type BudgetPeriod, tokenCreateBody, type TokenView } from '@modelgate/schemas/api';
import type { z } from 'zod';
import { quotaToUsd, usdToQuota } from '../../lib/money';
import { localInputToSeconds, secondsToLocalInput } from '../../lib/time';

/** The key form as people fill it in: the budget in USD, the expiry as a local date, lists one per line. */
export interface KeyFormValues {
  name: string;
  unlimitedQuota: boolean;
  quotaUsd: string;
  expires: boolean;
  /** A `datetime-local` value. */
  expiresAt: string;
  modelLimitsEnabled: boolean;
  /** Model names, one per line or comma-separated. */
  models: string;
  /** Addresses and CIDR ranges, one per line. */
  allowIps: string;
  group: string;
  /** Whole numbers, '0' (or empty) for none. */
  rpmLimit: string;
  tpmLimit: string;
  maxConcurrency: string;
  /** USD per budget period; empty for none. */
  budgetUsd: string;
  budgetPeriod: BudgetPeriod;
}

/** The limits of a key as POST and PUT /api/token take them (PUT adds `id`). */
export type KeyFields = z.output<typeof tokenCreateBody>;

export type KeyFormErrors = Partial<Record<keyof KeyFormValues, string>>;

export type KeyFormResult = { ok: true; body: KeyFields } | { ok: false; errors: KeyFormErrors };

export const NEW_KEY_FORM: KeyFormValues = {
  name: '',
  unlimitedQuota: true,
  quotaUsd: '',
  expires: false,
  expiresAt: '',
  modelLimitsEnabled: false,
  models: '',
  allowIps: '',
  group: '',
  rpmLimit: '0',
  tpmLimit: '0',
  maxConcurrency: '0',
  budgetUsd: '',
  budgetPeriod: 'month',
};

/** Which form field a body field's schema issue belongs to. */
const FIELD_OF_BODY_KEY: Record<string, keyof KeyFormValues> = {
  name: 'name',
  remain_quota: 'quotaUsd',
  unlimited_quota: 'unlimitedQuota',
  expired_time: 'expiresAt',
  model_limits_enabled: 'modelLimitsEnabled',
  model_limits: 'models',
  allow_ips: 'allowIps',
  group: 'group',
  rpm_limit: 'rpmLimit',
  tpm_limit: 'tpmLimit',
  max_concurrency: 'maxConcurrency',
  budget_usd: 'budgetUsd',
  budget_period: 'budgetPeriod',
};

const RATE_LIMIT_FIELDS = ['rpm_limit', 'tpm_limit', 'max_concurrency'] as const;

/** The form field of each limit an admin can put under control (docs/api.md 3.9.3). */
const FIELD_OF_LIMIT: Record<(typeof ADMIN_LIMIT_FIELDS)[number], keyof KeyFormValues> = {
  rpm_limit: 'rpmLimit',
  tpm_limit: 'tpmLimit',
  max_concurrency: 'maxConcurrency',
  budget_usd: 'budgetUsd',
  budget_period: 'budgetPeriod',
};

/** Entries of a list typed one per line or separated by commas, trimmed, without empty ones. */
export function listEntries(text: string): string[] {
  return text.split(/[,\n]/).map((entry) => entry.trim()).filter(Boolean);
}

/** An existing key's limits in the form (the key itself is never shown again). */
export function keyFormOfToken(token: TokenView, quotaPerUnit: number): KeyFormValues {
  return {
    name: token.name,
    unlimitedQuota: token.unlimited_quota,
    quotaUsd: String(quotaToUsd(token.remain_quota, quotaPerUnit)),
    expires: token.expired_time !== -1,
    expiresAt: token.expired_time === -1 ? '' : secondsToLocalInput(token.expired_time),
    modelLimitsEnabled: token.model_limits_enabled,
    models: listEntries(token.model_limits).join('\n'),
    allowIps: listEntries(token.allow_ips).join('\n'),
    group: token.group,
    rpmLimit: String(token.rpm_limit),
    tpmLimit: String(token.tpm_limit),
    maxConcurrency: String(token.max_concurrency),
    budgetUsd: token.budget_usd === null ? '' : String(token.budget_usd),
    budgetPeriod: token.budget_period,
  };
}

/** A limit as typed: empty is 0 (none); undefined when it is not a whole number from 0. */
function limitOf(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return 0;
  const value = Number(trimmed);
  return Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * The request body for the form's values, checked with the API's own schema, or what to fix, by
 * form field. `now` is unix seconds: an expiry must be later.
 */
export function keyBodyOfForm(values: KeyFormValues, quotaPerUnit: number, now: number): KeyFormResult {
  const errors: KeyFormErrors = {};
  if (!values.name.trim()) errors.name = 'Enter a name';

  let remainQuota: number | undefined;
  if (!values.unlimitedQuota) {
    const usd = values.quotaUsd.trim() === '' ? NaN : Number(values.quotaUsd);
    if (Number.isFinite(usd) && usd >= 0) remainQuota = usdToQuota(usd, quotaPerUnit);
    else errors.quotaUsd = 'Enter an amount in USD, 0 or more';
  }

  let expiredTime = -1;
  if (values.expires) {
    const seconds = localInputToSeconds(values.expiresAt);
    if (seconds === undefined) errors.expiresAt = 'Pick a date and time';
    else if (seconds <= now) errors.expiresAt = 'Pick a time in the future';
    else expiredTime = seconds;
  }

  const models = listEntries(values.models);
  if (values.modelLimitsEnabled && models.length === 0) errors.models = 'List at least one model';

  const limits = { rpm_limit: limitOf(values.rpmLimit), tpm_limit: limitOf(values.tpmLimit), max_concurrency: limitOf(values.maxConcurrency) };
  for (const field of RATE_LIMIT_FIELDS) {
    if (limits[field] === undefined) errors[FIELD_OF_LIMIT[field]] = 'Enter a whole number, 0 for none';
  }
  let budgetUsd: number | null = null;
  if (values.budgetUsd.trim() !== '') {
    budgetUsd = Number(values.budgetUsd);
    if (!Number.isFinite(budgetUsd) || budgetUsd < 0) errors.budgetUsd = 'Enter an amount in USD, or leave it empty for none';
  }

  const parsed = tokenCreateBody.safeParse({
    name: values.name,
    unlimited_quota: values.unlimitedQuota,
    ...(remainQuota === undefined ? {} : { remain_quota: remainQuota }),
    expired_time: expiredTime,
    model_limits_enabled: values.modelLimitsEnabled,
    // Kept while the allow-list is off, so switching it back on restores it.
    model_limits: models.join(','),
    allow_ips: listEntries(values.allowIps).join('\n'),
    group: values.group.trim(),
    ...limits,
    budget_usd: budgetUsd,
    budget_period: values.budgetPeriod,
  });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = FIELD_OF_BODY_KEY[String(issue.path[0])] ?? 'name';
      errors[field] ??= issue.message;
    }
  }
  if (!parsed.success || Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, body: parsed.data };
}

/**
 * The PUT fields of an edit of `token`: the limits only where they differ from the key's, so that
 * saving other fields neither puts a user's key under an admin's control nor trips its owner over
 * limits an admin set (docs/api.md 3.9.3).
 */
export function keyUpdateFields(body: KeyFields, token: TokenView): KeyFields {
  const changed: KeyFields = { ...body };
  for (const field of ADMIN_LIMIT_FIELDS) {
    if (changed[field] === token[field]) delete changed[field];
  }
  return changed;
}

/**
 * While an admin's limits hold, what the owner may not do (the API answers 403 for it), by form
 * field: raise a limit or the budget, take one off (0 or empty), or change the period.
 */
export function adminLimitErrors(body: KeyFields, token: TokenView): KeyFormErrors {
  const errors: KeyFormErrors = {};
  for (const field of RATE_LIMIT_FIELDS) {
    const next = body[field];
    const limit = token[field];
    if (next !== undefined && limit > 0 && (next === 0 || next > limit)) errors[FIELD_OF_LIMIT[field]] = `An admin set this limit: enter 1 to ${limit}`;
  }
  const budget = token.budget_usd;
  if (body.budget_usd !== undefined && budget !== null && (body.budget_usd === null || body.budget_usd > budget)) {
    errors.budgetUsd = `An admin set this budget: enter 0 to ${budget}`;
  }
  if (body.budget_period !== undefined && body.budget_period !== token.budget_period) errors.budgetPeriod = 'An admin set the budget period';
  return errors;
}

/** Lines that set a new key up for OpenAI-compatible tools and list the models it can use. */
export function keyUsageSnippet(baseUrl: string, key: string): string {
  return [
    `export OPENAI_BASE_URL=${baseUrl}`,
    `export OPENAI_API_KEY=${key}`,
    'curl "$OPENAI_BASE_URL/models" -H "Authorization: Bearer $OPENAI_API_KEY"',
  ].join('\n');
}
