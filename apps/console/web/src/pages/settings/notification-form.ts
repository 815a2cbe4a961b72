import { type NotificationSettingsView, notificationSettingsBody, type NotifyType } from '@modelgate/schemas/api';
import type { z } from 'zod';
import { quotaToUsd, usdToQuota } from '../../lib/money';

/** The low-balance warning as people fill it in: the threshold in USD, the secret only when typed. */
export interface NotificationFormValues {
  notifyType: NotifyType;
  thresholdUsd: string;
  email: string;
  webhookUrl: string;
  /** Empty keeps the stored secret (it is never shown). */
  webhookSecret: string;
}

export type NotificationFields = z.output<typeof notificationSettingsBody>;

export type NotificationFormErrors = Partial<Record<keyof NotificationFormValues, string>>;

export type NotificationFormResult = { ok: true; body: NotificationFields } | { ok: false; errors: NotificationFormErrors };

export const NOTIFY_TYPE_LABELS: Record<NotifyType, string> = { '': 'Off', email: 'By email', webhook: 'By webhook' };

const FIELD_OF_BODY_KEY: Record<string, keyof NotificationFormValues> = {
  notify_type: 'notifyType',
  quota_warning_threshold: 'thresholdUsd',
  notification_email: 'email',
  webhook_url: 'webhookUrl',
  webhook_secret: 'webhookSecret',
};

export function notificationFormOf(settings: NotificationSettingsView, quotaPerUnit: number): NotificationFormValues {
  return {
    notifyType: settings.notify_type,
    thresholdUsd: settings.quota_warning_threshold === 0 ? '' : String(quotaToUsd(settings.quota_warning_threshold, quotaPerUnit)),
    email: settings.notification_email,
    webhookUrl: settings.webhook_url,
    webhookSecret: '',
  };
}

/**
 * The PUT body for the form, checked with the API's own schema, or what to fix by field. What the
 * chosen way needs is asked for here already: an address (`accountEmail` is the fallback), a URL
 * and a secret (`secretSet`: one is stored), a threshold above 0. An empty email field sends ""
 * (the account's email); an empty secret field keeps the stored secret.
 */
export function notificationBodyOfForm(values: NotificationFormValues, quotaPerUnit: number, accountEmail: string, secretSet: boolean): NotificationFormResult {
  const errors: NotificationFormErrors = {};
  const usd = values.thresholdUsd.trim() === '' ? 0 : Number(values.thresholdUsd);
  if (!Number.isFinite(usd) || usd < 0) errors.thresholdUsd = 'Enter an amount in USD';
  else if (values.notifyType !== '' && usd === 0) errors.thresholdUsd = 'Enter an amount above 0';
  const email = values.email.trim();
  const webhookUrl = values.webhookUrl.trim();
  const secret = values.webhookSecret;
  if (values.notifyType === 'email' && !email && !accountEmail) errors.email = 'Enter an address: your account has no email';
  if (values.notifyType === 'webhook') {
    if (!webhookUrl) errors.webhookUrl = 'Enter the URL to POST to';
    if (!secret && !secretSet) errors.webhookSecret = 'Enter a secret to sign the webhooks with';
  }
  // Only the chosen way's fields are sent: the others (hidden) stay as stored.
  const parsed = notificationSettingsBody.safeParse({
    notify_type: values.notifyType,
    quota_warning_threshold: errors.thresholdUsd ? 0 : usdToQuota(usd, quotaPerUnit),
    ...(values.notifyType === 'email' ? { notification_email: email } : {}),
    ...(values.notifyType === 'webhook' ? { webhook_url: webhookUrl, ...(secret ? { webhook_secret: secret } : {}) } : {}),
  });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = FIELD_OF_BODY_KEY[String(issue.path[0])] ?? 'notifyType';
      errors[field] ??= field === 'email' ? 'Enter a valid email address' : field === 'webhookSecret' ? 'Use 8 to 256 characters' : issue.message;
    }
  }
  if (!parsed.success || Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, body: parsed.data };
}
