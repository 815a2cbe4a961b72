import { affTransferBody, MAX_TOPUP_UNITS, stripePayBody, topUpRedeemBody } from '@modelgate/schemas/api';
import { z } from 'zod';
import { formatQuotaAsUsd, formatInteger } from '../../lib/money';

/** The top-up form: whole units from the deployment's minimum (`min_topup` of /api/status) to the maximum. */
export function topUpFormSchema(minTopUp: number) {
  return stripePayBody.pick({ amount: true }).extend({
    amount: z
      .number({ error: 'Enter a whole number of units' })
      .int('Enter a whole number of units')
      .min(minTopUp, `At least ${formatInteger(minTopUp)}`)
      .max(MAX_TOPUP_UNITS, `At most ${formatInteger(MAX_TOPUP_UNITS)}`),
  });
}

/** The affiliate transfer form: from USD 1 worth of quota up to what has been earned and not moved yet. */
export function affTransferFormSchema(quotaPerUnit: number, affQuota: number) {
  return affTransferBody.extend({
    quota: z
      .number({ error: 'Enter a whole amount of quota' })
      .int('Enter a whole amount of quota')
      .min(quotaPerUnit, `At least ${formatInteger(quotaPerUnit)} (${formatQuotaAsUsd(quotaPerUnit, quotaPerUnit)})`)
      .max(affQuota, `At most ${formatInteger(affQuota)}, what you have earned`),
  });
}

/** The redeem form: a code as it was handed out; spaces around it (from copying) are dropped. */
export const redeemFormSchema = topUpRedeemBody.extend({
  key: z.string().trim().min(1, 'Enter a redemption code').max(64, 'A redemption code is at most 64 characters'),
});

/** The address that registers a new user as invited by the owner of `affCode`. */
export function invitationLink(origin: string, affCode: string): string {
  return `${origin}/register?aff=${encodeURIComponent(affCode)}`;
}

/** A top-up's status (pending, success, failed or expired) as a badge: its text and class. */
export function topUpStatusBadge(status: string): { label: string; className: string } {
  const label = status.charAt(0).toUpperCase() + status.slice(1);
  if (status === 'success') return { label, className: 'badge ok' };
  if (status === 'failed' || status === 'expired') return { label, className: 'badge off' };
  return { label, className: 'badge' };
}
