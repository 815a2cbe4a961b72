import { decryptSecret, type PrismaClient } from '@modelgate/db';
import { type BalanceWarningJob, enqueueMail, type MailJob, type Queue } from '@modelgate/queue';
import { readOptions } from '@modelgate/schemas';
import { findWarningRecipient } from './repository';
import { postSignedWebhook } from './webhook';

export interface BalanceWarningDeps {
  prisma: PrismaClient;
  /** Producer of the `mail` queue: warnings by email are sent by the mail worker. */
  mailQueue: Queue<MailJob>;
  /** Opens the webhook secrets the account service sealed. */
  cryptoSecret: string;
}

export type BalanceWarningOutcome = 'mailed' | 'posted' | 'skipped';

/** Quota as USD with cents, e.g. 1_250_000 at 500000 per unit -> "2.50". */
function usd(quota: bigint, quotaPerUnit: number): string {
  return (Number(quota) / quotaPerUnit).toFixed(2);
}

/** The webhook's body (docs/api.md 3.9.6); `crossed_at` in unix seconds like every time of the API. */
export function balanceLowPayload(user: { id: number; username: string }, quota: bigint, threshold: bigint, quotaPerUnit: number, crossedAtMs: number) {
  return {
    type: 'balance.low',
    user_id: user.id,
    username: user.username,
    quota: Number(quota),
    threshold: Number(threshold),
    quota_per_unit: quotaPerUnit,
    crossed_at: Math.floor(crossedAtMs / 1000),
  };
}

/**
 * Sends one low-balance warning (docs/api.md 3.9.6) the way the user wants it now: settings turned
 * off since, a threshold the balance is no longer below, or no address left send nothing. The
 * balance reported is the one the crossing charge left.
 */
export async function sendBalanceWarning(deps: BalanceWarningDeps, warning: BalanceWarningJob): Promise<BalanceWarningOutcome> {
  const user = await findWarningRecipient(deps.prisma, warning.userId);
  const after = BigInt(warning.after);
  if (!user || user.quotaWarningThreshold <= 0n || after >= user.quotaWarningThreshold) return 'skipped';
  const threshold = user.quotaWarningThreshold;
  const { QuotaPerUnit, ServerAddress, WebhookAllowPrivate } = await readOptions(deps.prisma);

  if (user.notifyType === 'email') {
    const to = user.notificationEmail ?? user.email;
    if (!to) return 'skipped';
    const text =
      `Your Modelgate balance is USD ${usd(after, QuotaPerUnit)}, below your warning threshold of USD ${usd(threshold, QuotaPerUnit)}. ` +
      `Top up: ${ServerAddress}/wallet`;
    await enqueueMail(deps.mailQueue, { to, subject: 'Your Modelgate balance is low', text });
    return 'mailed';
  }
  if (user.notifyType === 'webhook') {
    if (!user.webhookUrl || !user.webhookSecretEnc) return 'skipped';
    const secret = decryptSecret(user.webhookSecretEnc, deps.cryptoSecret);
    const body = JSON.stringify(balanceLowPayload(user, after, threshold, QuotaPerUnit, warning.crossedAt));
    await postSignedWebhook(user.webhookUrl, body, secret, { allowPrivate: WebhookAllowPrivate });
    return 'posted';
  }
  return 'skipped';
}
