import { encryptSecret } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { checkWebhookUrl, WebhookAddressError } from '@modelgate/http';
import { NOTIFY_TYPES, type NotificationSettingsView, type notificationSettingsBody, type NotifyType, readOptions } from '@modelgate/schemas';
import type { z } from 'zod';
import type { AccountDeps } from '../../deps';
import { findNotificationSettings, type NotificationSettingsRow, saveNotificationSettings } from './repository';

function notifyTypeOf(stored: string): NotifyType {
  return (NOTIFY_TYPES as readonly string[]).includes(stored) ? (stored as NotifyType) : '';
}

/** The settings as the API shows them: the webhook secret only as whether one is set. */
function viewOf(row: NotificationSettingsRow): NotificationSettingsView {
  return {
    notify_type: notifyTypeOf(row.notifyType),
    quota_warning_threshold: Number(row.quotaWarningThreshold),
    notification_email: row.notificationEmail ?? '',
    webhook_url: row.webhookUrl ?? '',
    webhook_secret_set: row.webhookSecretEnc !== null,
  };
}

async function settingsOf(deps: AccountDeps, userId: number) {
  const row = await findNotificationSettings(deps.prisma, userId);
  if (!row) throw new AppError('unauthorized', 'not logged in');
  return row;
}

export async function getNotificationSettings(deps: AccountDeps, userId: number): Promise<NotificationSettingsView> {
  return viewOf(await settingsOf(deps, userId));
}

const invalid = (param: string, message: string) => new AppError('invalid_request', `${param}: ${message}`, { param });

/** The worker checks again at each delivery; this refuses an address that is not allowed now. */
async function checkWebhookAddress(deps: AccountDeps, url: string): Promise<void> {
  const { WebhookAllowPrivate } = await readOptions(deps.prisma);
  try {
    await checkWebhookUrl(url, { allowPrivate: WebhookAllowPrivate });
  } catch (err) {
    if (err instanceof WebhookAddressError) throw invalid('webhook_url', err.message);
    throw err;
  }
}

/**
 * docs/api.md 3.9.6. Optional fields left out keep their stored values, "" clears them; what the
 * chosen way of warning needs must be there once merged: an address for mail (this one or the
 * account's), a URL at an allowed address and a secret for webhooks.
 */
export async function updateNotificationSettings(
  deps: AccountDeps,
  userId: number,
  input: z.output<typeof notificationSettingsBody>,
): Promise<NotificationSettingsView> {
  const current = await settingsOf(deps, userId);
  const next: NotificationSettingsRow = {
    notifyType: input.notify_type,
    quotaWarningThreshold: BigInt(input.quota_warning_threshold),
    notificationEmail: input.notification_email === undefined ? current.notificationEmail : input.notification_email || null,
    webhookUrl: input.webhook_url === undefined ? current.webhookUrl : input.webhook_url || null,
    webhookSecretEnc:
      input.webhook_secret === undefined
        ? current.webhookSecretEnc
        : input.webhook_secret
          ? encryptSecret(input.webhook_secret, deps.env.CRYPTO_SECRET)
          : null,
  };
  if (next.notifyType === 'email' && !(next.notificationEmail ?? current.email)) {
    throw invalid('notification_email', 'required for warnings by email: the account has no email');
  }
  if (next.notifyType === 'webhook') {
    if (!next.webhookUrl) throw invalid('webhook_url', 'required for warnings by webhook');
    if (!next.webhookSecretEnc) throw invalid('webhook_secret', 'required for warnings by webhook (it signs each delivery)');
  }
  if (next.webhookUrl && (next.notifyType === 'webhook' || input.webhook_url !== undefined)) await checkWebhookAddress(deps, next.webhookUrl);
  return viewOf(await saveNotificationSettings(deps.prisma, userId, next));
}
