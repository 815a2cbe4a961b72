import { MAX_REDEMPTION_BATCH, redemptionCreateBody, REDEMPTION_NEVER_EXPIRES, REDEMPTION_STATUS, type RedemptionView } from '@modelgate/schemas/api';
import { z } from 'zod';
import { formatInteger, formatQuotaAsUsd, usdToQuota } from '../../../lib/money';
import { localInputToSeconds } from '../../../lib/time';

/** The batch form as admins fill it in: the value in USD, the expiry as a local date and time. */
export function redemptionFormSchema(quotaPerUnit: number, now: () => number) {
  return z
    .object({
      name: z.string().trim().min(1, 'Enter a name').max(50, 'At most 50 characters'),
      value_usd: z
        .number({ error: 'Enter an amount in USD, like 5 or 2.50' })
        .refine((usd) => usdToQuota(usd, quotaPerUnit) >= 1, `At least ${formatQuotaAsUsd(1, quotaPerUnit)} (1 quota)`)
        .refine((usd) => usdToQuota(usd, quotaPerUnit) <= Number.MAX_SAFE_INTEGER, 'Too large'),
      count: z
        .number({ error: 'Enter how many codes to make' })
        .int('Enter a whole number')
        .min(1, 'At least 1')
        .max(MAX_REDEMPTION_BATCH, `At most ${MAX_REDEMPTION_BATCH}`),
      expires: z.boolean(),
      /** A `datetime-local` value; read only when `expires` is ticked. */
      expires_at: z.string(),
    })
    .superRefine((values, ctx) => {
      if (!values.expires) return;
      const seconds = localInputToSeconds(values.expires_at);
      if (seconds === undefined) ctx.addIssue({ code: 'custom', path: ['expires_at'], message: 'Pick a date and time' });
      else if (seconds <= now()) ctx.addIssue({ code: 'custom', path: ['expires_at'], message: 'Pick a time in the future' });
    });
}
export type RedemptionFormInput = z.input<ReturnType<typeof redemptionFormSchema>>;
export type RedemptionFormOutput = z.output<ReturnType<typeof redemptionFormSchema>>;

export const NEW_REDEMPTION_FORM: RedemptionFormInput = { name: '', value_usd: Number.NaN, count: 1, expires: false, expires_at: '' };

/** The `POST /api/redemption` body of a filled-in form. */
export function redemptionBodyOf(values: RedemptionFormOutput, quotaPerUnit: number): z.input<typeof redemptionCreateBody> {
  return {
    name: values.name,
    quota: usdToQuota(values.value_usd, quotaPerUnit),
    count: values.count,
    expired_time: values.expires ? (localInputToSeconds(values.expires_at) ?? REDEMPTION_NEVER_EXPIRES) : REDEMPTION_NEVER_EXPIRES,
  };
}

/** What a USD value is worth in quota, under the value field. */
export function valueHint(usd: number, quotaPerUnit: number): string {
  if (!Number.isFinite(usd)) return `An amount in USD, like 5 or 2.50 (${formatInteger(quotaPerUnit)} quota per USD 1)`;
  return `Each code adds ${formatInteger(usdToQuota(usd, quotaPerUnit))} quota (${formatQuotaAsUsd(usdToQuota(usd, quotaPerUnit), quotaPerUnit)}) to the balance of whoever redeems it`;
}

export type RedemptionBadge = { label: string; className: string };

/** A code's state for people: an enabled code past its expiry shows as expired. `now` is unix seconds. */
export function redemptionStatusBadge(code: Pick<RedemptionView, 'status' | 'expired_time'>, now: number): RedemptionBadge {
  if (code.status === REDEMPTION_STATUS.used) return { label: 'Used', className: 'badge' };
  if (code.status === REDEMPTION_STATUS.disabled) return { label: 'Disabled', className: 'badge off' };
  if (code.expired_time !== REDEMPTION_NEVER_EXPIRES && code.expired_time <= now) return { label: 'Expired', className: 'badge off' };
  return { label: 'Enabled', className: 'badge ok' };
}

/** The text file of a new batch: one code a line. */
export function codesFileText(codes: readonly string[]): string {
  return `${codes.join('\n')}\n`;
}

/** `redemption-codes-<name>.txt`, the name reduced to letters, digits and dashes. */
export function codesFileName(name: string): string {
  const slug = name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return `redemption-codes${slug ? `-${slug}` : ''}.txt`;
}
