import { tokenCreateBody, type TokenView } from '@modelgate/schemas/api';
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
  };
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

/** Lines that set a new key up for OpenAI-compatible tools and list the models it can use. */
export function keyUsageSnippet(baseUrl: string, key: string): string {
  return [
    `export OPENAI_BASE_URL=${baseUrl}`,
    `export OPENAI_API_KEY=${key}`,
    'curl "$OPENAI_BASE_URL/models" -H "Authorization: Bearer $OPENAI_API_KEY"',
  ].join('\n');
}
